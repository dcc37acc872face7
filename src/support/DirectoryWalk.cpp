#include "mlgo/support/DirectoryWalk.h"

#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
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
  DIR *dir = ::opendir(path.c_str());
  if (!dir)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "%s: cannot open directory: %s",
                                   path.c_str(), std::strerror(errno));
  while (struct dirent *entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..")
      continue;
    unsigned char type = entry->d_type;
    std::string full = joinPath(path, name);
    struct stat st;
    if (type == DT_UNKNOWN) {
      if (::lstat(full.c_str(), &st) != 0)
        continue;
      type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
    }
    bool looksLikeDirectory = type == DT_DIR;
    if (type == DT_LNK && ::stat(full.c_str(), &st) == 0)
      looksLikeDirectory = S_ISDIR(st.st_mode);
    out.push_back({std::move(name), type == DT_DIR, looksLikeDirectory});
  }
  ::closedir(dir);
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
