#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"

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
  bool absolute = path.starts_with("/");
  llvm::SmallVector<llvm::StringRef, 16> parts;
  llvm::SmallVector<llvm::StringRef, 16> out;
  path.split(parts, '/');
  for (llvm::StringRef part : parts) {
    if (part.empty() || part == ".")
      continue;
    if (part == "..") {
      if (!out.empty() && out.back() != "..")
        out.pop_back();
      else if (!absolute)
        out.push_back(part);
      continue;
    }
    out.push_back(part);
  }
  std::string result = absolute ? "/" : "";
  for (size_t i = 0; i < out.size(); ++i) {
    if (i)
      result += '/';
    result += out[i].str();
  }
  return result.empty() ? "." : result;
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
