#include "mlgo/support/StaleTemporaries.h"

#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/STLExtras.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace mlgo {
namespace {

bool allDigits(llvm::StringRef text) {
  return !text.empty() && llvm::all_of(text, [](char c) { return c >= '0' && c <= '9'; });
}

// The directory to clean, open; an empty descriptor when it does not exist.
llvm::Expected<FileDescriptor> openDirectory(llvm::StringRef root, llvm::StringRef relative) {
  if (relative.empty() || relative == ".") {
    std::string dir = root.empty() ? "." : root.str();
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); // the user's own directory, as named
    int err = errno;
    if (fd < 0 && err == ENOENT)
      return FileDescriptor();
    if (fd < 0)
      return llvm::createStringError(std::error_code(err, std::generic_category()), "cannot open %s: %s", dir.c_str(),
                                     std::strerror(err));
    return FileDescriptor(fd);
  }
  auto fd = openBeneath(root, relative, O_RDONLY | O_DIRECTORY);
  if (!fd) {
    llvm::Error e = fd.takeError();
    if (consumeIfMissing(e))
      return FileDescriptor();
    return std::move(e);
  }
  return fd;
}

} // namespace

std::optional<llvm::StringRef> temporaryStem(llvm::StringRef name) {
  auto [rest, counter] = name.rsplit('.');
  if (!allDigits(counter))
    return std::nullopt;
  auto [beforePid, pid] = rest.rsplit('.');
  if (!allDigits(pid) || !beforePid.consume_back(".tmp") || beforePid.empty())
    return std::nullopt;
  return beforePid;
}

llvm::Expected<std::vector<std::string>> removeStaleTemporaries(llvm::StringRef root, llvm::StringRef relative,
                                                                const std::set<std::string, std::less<>> &stems) {
  return removeStaleTemporaries(root, relative, [&](llvm::StringRef stem) { return stems.count(stem) != 0; });
}

llvm::Expected<std::vector<std::string>>
removeStaleTemporaries(llvm::StringRef root, llvm::StringRef relative,
                       llvm::function_ref<bool(llvm::StringRef stem)> ownStem) {
  std::vector<std::string> removed;
  auto dir = openDirectory(root, relative);
  if (!dir)
    return dir.takeError();
  if (!*dir)
    return removed;
  std::string shown = relative.empty() ? root.str() : joinPath(root, relative);
  // readdir on a duplicate: closedir closes it, the removals use the original.
  int listed = ::fcntl(dir->get(), F_DUPFD_CLOEXEC, 0);
  DIR *stream = listed < 0 ? nullptr : ::fdopendir(listed);
  if (!stream) {
    int err = errno;
    if (listed >= 0)
      ::close(listed);
    return llvm::createStringError(std::error_code(err, std::generic_category()), "cannot list %s: %s", shown.c_str(),
                                   std::strerror(err));
  }
  std::vector<std::string> names; // all read first: removing while reading may skip entries
  while (struct dirent *entry = ::readdir(stream))
    if (std::optional<llvm::StringRef> stem = temporaryStem(entry->d_name); stem && ownStem(*stem))
      names.emplace_back(entry->d_name);
  ::closedir(stream);
  for (const std::string &name : names) {
    std::string path = joinPath(shown, name);
    // unlinkat without AT_REMOVEDIR removes a link itself and refuses a
    // directory (EISDIR), which no writer of ours makes under such a name.
    if (::unlinkat(dir->get(), name.c_str(), 0) != 0) {
      int err = errno;
      if (err == ENOENT || err == EISDIR)
        continue;
      return llvm::createStringError(std::error_code(err, std::generic_category()),
                                     "cannot remove %s, a temporary left by a run that died: %s", path.c_str(),
                                     std::strerror(err));
    }
    log::info("removed " + path + ", a temporary left by a run that died before renaming it into place");
    removed.push_back(std::move(path));
  }
  return removed;
}

} // namespace mlgo
