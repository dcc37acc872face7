#include "mlgo/support/DirectoryWalk.h"

#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <vector>

namespace mlgo {
namespace {

struct Listed {
  std::string Name;
  bool IsDirectory;        // a real directory, not a symlink to one
  bool LooksLikeDirectory; // a directory or a symlink to one
};

llvm::Error listDirectory(const std::string &path, std::vector<Listed> &out) {
  namespace fs = llvm::sys::fs;
  std::error_code ec;
  for (fs::directory_iterator it(path, ec, /*follow_symlinks=*/false), end; !ec && it != end; it.increment(ec)) {
    fs::file_type type = it->type();
    if (type == fs::file_type::type_unknown) { // d_type not filled in: lstat
      llvm::ErrorOr<fs::basic_file_status> status = it->status();
      if (!status)
        continue;
      type = status->type();
    }
    bool isDirectory = type == fs::file_type::directory_file;
    bool looksLikeDirectory = isDirectory || (type == fs::file_type::symlink_file && fs::is_directory(it->path()));
    out.push_back({baseName(it->path()).str(), isDirectory, looksLikeDirectory});
  }
  if (ec)
    return llvm::createStringError(ec, "%s: cannot open directory: %s", path.c_str(), ec.message().c_str());
  std::sort(out.begin(), out.end(), [](const Listed &a, const Listed &b) { return a.Name < b.Name; });
  return llvm::Error::success();
}

bool matches(llvm::StringRef name, const std::vector<llvm::StringRef> &suffixes) {
  for (llvm::StringRef suffix : suffixes)
    if (name.ends_with(suffix))
      return true;
  return false;
}

void walk(const std::string &root, const std::string &relative, const std::vector<llvm::StringRef> &suffixes,
          const std::function<void(const WalkEntry &)> &visit) {
  std::vector<Listed> entries;
  if (llvm::Error e = listDirectory(relative.empty() ? root : joinPath(root, relative), entries)) {
    log::warning("skipping unreadable directory: " + llvm::toString(std::move(e)));
    return;
  }
  for (const Listed &entry : entries)
    if (matches(entry.Name, suffixes))
      visit({relative.empty() ? entry.Name : relative + "/" + entry.Name, entry.LooksLikeDirectory});
  for (const Listed &entry : entries)
    if (entry.IsDirectory)
      walk(root, relative.empty() ? entry.Name : relative + "/" + entry.Name, suffixes, visit);
}

} // namespace

llvm::Error walkMatching(llvm::StringRef root, std::initializer_list<llvm::StringRef> suffixes,
                         const std::function<void(const WalkEntry &)> &visit) {
  struct stat st;
  std::string rootPath = root.empty() ? "." : root.str();
  if (::stat(rootPath.c_str(), &st) != 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "%s: %s", rootPath.c_str(),
                                   std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return llvm::createStringError("%s: not a directory", rootPath.c_str());
  walk(rootPath, "", std::vector<llvm::StringRef>(suffixes), visit);
  return llvm::Error::success();
}

} // namespace mlgo
