#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace mlgo {

std::string joinPath(llvm::StringRef a, llvm::StringRef b) {
  if (b.starts_with("/") || a.empty())
    return b.str();
  std::string out = a.str();
  if (!out.ends_with("/"))
    out += '/';
  out += b.str();
  return out;
}

std::string normalizePath(llvm::StringRef path) {
  if (path.empty())
    return "";
  // LLVM reads a leading "//x" as a network root name; os.path.normpath (and
  // this project) treat any run of leading slashes as the root.
  bool absolute = path.starts_with("/");
  llvm::SmallString<256> normal(absolute ? "/" : "");
  normal += path.ltrim('/');
  llvm::sys::path::remove_dots(normal, /*remove_dot_dot=*/true, llvm::sys::path::Style::posix);
  if (normal.empty())
    return absolute ? "/" : ".";
  return normal.str().str();
}

llvm::StringRef dirName(llvm::StringRef path) {
  size_t slash = path.rfind('/');
  if (slash == llvm::StringRef::npos)
    return "";
  llvm::StringRef head = path.take_front(slash + 1);
  // Python strips trailing slashes unless the head is all slashes.
  llvm::StringRef stripped = head.rtrim('/');
  return stripped.empty() ? head : stripped;
}

llvm::StringRef baseName(llvm::StringRef path) {
  size_t slash = path.rfind('/');
  return slash == llvm::StringRef::npos ? path : path.drop_front(slash + 1);
}

bool isWithin(llvm::StringRef path, llvm::StringRef dir) {
  std::string p = normalizePath(path), d = normalizePath(dir);
  if (p == d)
    return true;
  if (d == "/")
    return p.starts_with("/");
  return p.size() > d.size() && llvm::StringRef(p).starts_with(d) && p[d.size()] == '/';
}

std::string absolutePath(llvm::StringRef path) {
  llvm::SmallString<256> buf(path);
  llvm::sys::fs::make_absolute(buf);
  return normalizePath(buf);
}

} // namespace mlgo
