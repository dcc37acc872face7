#include "mlgo/support/BeneathPath.h"

#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace mlgo {

char BeneathError::ID = 0;

FileDescriptor &FileDescriptor::operator=(FileDescriptor &&other) noexcept {
  if (this != &other) {
    if (Fd >= 0)
      ::close(Fd);
    Fd = std::exchange(other.Fd, -1);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (Fd >= 0)
    ::close(Fd);
}

BeneathError::BeneathError(std::string path, std::string root, int err)
    : Path(std::move(path)), Root(std::move(root)), Errno(err) {}

bool BeneathError::symbolicLink() const { return Errno == ELOOP; }
bool BeneathError::missing() const { return Errno == ENOENT; }

void BeneathError::log(llvm::raw_ostream &os) const {
  if (symbolicLink())
    os << Path << ": a symbolic link below " << Root << "; never followed (docs/security.md)";
  else if (Errno == EXDEV)
    os << Path << ": not a path inside " << Root;
  else
    os << Path << ": " << std::strerror(Errno);
}

std::error_code BeneathError::convertToErrorCode() const { return {Errno, std::generic_category()}; }

bool consumeIfMissing(llvm::Error &error) {
  bool missing = false;
  error = llvm::handleErrors(std::move(error), [&](std::unique_ptr<BeneathError> e) -> llvm::Error {
    if (!e->missing())
      return llvm::Error(std::move(e));
    missing = true;
    return llvm::Error::success();
  });
  return missing;
}

namespace {

std::atomic<bool> Openat2Enabled{true};

struct Components {
  std::vector<std::string> Names;
  std::string Shown; // root joined with the whole relative path
};

// The components of a relative path; ".." and absolute paths could leave the
// directory and are refused (EXDEV, as openat2 says of them).
llvm::Expected<Components> split(llvm::StringRef root, llvm::StringRef relative) {
  Components c;
  c.Shown = joinPath(root, relative);
  if (relative.starts_with("/"))
    return llvm::make_error<BeneathError>(relative.str(), root.str(), EXDEV);
  llvm::SmallVector<llvm::StringRef, 8> parts;
  relative.split(parts, '/');
  for (llvm::StringRef part : parts) {
    if (part.empty() || part == ".")
      continue;
    if (part == "..")
      return llvm::make_error<BeneathError>(c.Shown, root.str(), EXDEV);
    c.Names.push_back(part.str());
  }
  if (c.Names.empty())
    return llvm::make_error<BeneathError>(c.Shown, root.str(), EINVAL);
  return c;
}

llvm::Expected<FileDescriptor> openRoot(llvm::StringRef root) {
  std::string dir = root.empty() ? "." : root.str();
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return llvm::make_error<BeneathError>(dir, dir, errno);
  return FileDescriptor(fd);
}

// The error for a component that would not open: a link is named as one
// (O_NOFOLLOW says ELOOP, O_DIRECTORY may say ENOTDIR, O_EXCL EEXIST).
llvm::Error componentError(int dir, const std::string &name, const std::string &shown, llvm::StringRef root, int err) {
  struct stat st;
  if (err != ELOOP && ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
    err = ELOOP;
  return llvm::make_error<BeneathError>(shown, root.str(), err);
}

// One component at a time, each directory opened with O_NOFOLLOW from the
// one before: what openat2 does in the kernel, and how its refusals are
// told apart. With `create`, missing directories are made on the way.
llvm::Expected<FileDescriptor> walk(int rootFd, llvm::StringRef root, const std::vector<std::string> &names,
                                    size_t directories, int flags, mode_t mode, bool create) {
  FileDescriptor held;
  int dir = rootFd;
  std::string shown = root.str();
  for (size_t i = 0; i < directories; ++i) {
    shown = joinPath(shown, names[i]);
    int fd = ::openat(dir, names[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(dir, names[i].c_str(), 0755) != 0 && errno != EEXIST)
        return llvm::make_error<BeneathError>(shown, root.str(), errno);
      if (llvm::Error e = syncDirectoryDescriptor(dir, dirName(shown)))
        return std::move(e);
      fd = ::openat(dir, names[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0)
      return componentError(dir, names[i], shown, root, errno);
    held = FileDescriptor(fd);
    dir = fd;
  }
  if (directories == names.size()) {
    if (!held) { // the root itself
      int fd = ::fcntl(rootFd, F_DUPFD_CLOEXEC, 0);
      if (fd < 0)
        return llvm::make_error<BeneathError>(shown, root.str(), errno);
      held = FileDescriptor(fd);
    }
    return std::move(held);
  }
  shown = joinPath(shown, names.back());
  int fd = ::openat(dir, names.back().c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    return componentError(dir, names.back(), shown, root, errno);
  return FileDescriptor(fd);
}

// The kernel's refusal of any link, "..", or absolute path on the way; on a
// refusal the walk runs to tell which component is at fault.
llvm::Expected<FileDescriptor> openComponents(int rootFd, llvm::StringRef root, const std::vector<std::string> &names,
                                              size_t directories, int flags, mode_t mode, bool create) {
  if (Openat2Enabled.load(std::memory_order_relaxed) && !create) {
    std::string relative;
    for (size_t i = 0; i < names.size(); ++i)
      relative += (i ? "/" : "") + names[i];
    if (directories == names.size())
      flags = O_RDONLY | O_DIRECTORY;
    struct open_how how;
    std::memset(&how, 0, sizeof(how));
    how.flags = static_cast<uint64_t>(flags | O_NOFOLLOW | O_CLOEXEC);
    how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, rootFd, relative.c_str(), &how, sizeof(how));
    if (fd >= 0)
      return FileDescriptor(static_cast<int>(fd));
    int err = errno;
    if (err == ENOSYS)
      Openat2Enabled = false; // an older kernel: one component at a time from now on
    else if (err != ELOOP && err != ENOTDIR && err != EXDEV && err != EAGAIN && err != EEXIST)
      return llvm::make_error<BeneathError>(joinPath(root, relative), root.str(), err);
  }
  return walk(rootFd, root, names, directories, flags, mode, create);
}

} // namespace

llvm::Expected<FileDescriptor> openBeneath(llvm::StringRef root, llvm::StringRef relative, int flags, mode_t mode) {
  auto components = split(root, relative);
  if (!components)
    return components.takeError();
  auto rootFd = openRoot(root);
  if (!rootFd)
    return rootFd.takeError();
  return openComponents(rootFd->get(), root, components->Names, components->Names.size() - 1, flags, mode,
                        /*create=*/false);
}

llvm::Expected<FileDescriptor> openRegularFileBeneath(llvm::StringRef root, llvm::StringRef relative) {
  auto fd = openBeneath(root, relative, O_RDONLY | O_NONBLOCK);
  if (!fd)
    return fd.takeError();
  std::string shown = joinPath(root, relative);
  struct stat st;
  if (::fstat(fd->get(), &st) != 0)
    return llvm::make_error<BeneathError>(shown, root.str(), errno);
  if (!S_ISREG(st.st_mode))
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "%s: not a regular file",
                                   shown.c_str());
  // Reads block again, as on any regular file.
  int status = ::fcntl(fd->get(), F_GETFL);
  if (status < 0 || ::fcntl(fd->get(), F_SETFL, status & ~O_NONBLOCK) != 0)
    return llvm::make_error<BeneathError>(shown, root.str(), errno);
  return fd;
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readFileBeneath(llvm::StringRef root, llvm::StringRef relative) {
  auto fd = openRegularFileBeneath(root, relative);
  if (!fd)
    return fd.takeError();
  std::string shown = joinPath(root, relative);
  auto buffer = llvm::MemoryBuffer::getOpenFile(llvm::sys::fs::convertFDToNativeFile(fd->get()), shown,
                                                /*FileSize=*/-1, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: %s", shown.c_str(), buffer.getError().message().c_str());
  return std::move(*buffer);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readOwnFile(llvm::StringRef path) {
  llvm::StringRef dir = dirName(path);
  return readFileBeneath(dir.empty() ? "." : dir, baseName(path));
}

llvm::Expected<ParentBeneath> openParentBeneath(llvm::StringRef root, llvm::StringRef relative, bool create) {
  auto components = split(root, relative);
  if (!components)
    return components.takeError();
  auto rootFd = openRoot(root);
  if (!rootFd)
    return rootFd.takeError();
  std::vector<std::string> &names = components->Names;
  std::string last = names.back();
  names.pop_back();
  if (names.empty())
    return ParentBeneath{std::move(*rootFd), std::move(last), std::move(components->Shown)};
  auto dir = openComponents(rootFd->get(), root, names, names.size(), 0, 0, create);
  if (!dir)
    return dir.takeError();
  return ParentBeneath{std::move(*dir), std::move(last), std::move(components->Shown)};
}

llvm::Error removeBeneath(llvm::StringRef root, llvm::StringRef relative) {
  auto parent = openParentBeneath(root, relative);
  if (!parent) {
    llvm::Error e = parent.takeError();
    if (consumeIfMissing(e))
      return llvm::Error::success();
    return e;
  }
  if (::unlinkat(parent->Dir.get(), parent->Name.c_str(), 0) != 0 && errno != ENOENT)
    return llvm::make_error<BeneathError>(parent->Shown, root.str(), errno);
  return llvm::Error::success();
}

namespace {

// Removes everything in the open directory `dir` (shown as `shown`) with
// unlinkat, descending only into real directories (O_NOFOLLOW).
llvm::Error emptyDirectory(int dir, const std::string &shown, llvm::StringRef root, unsigned depth) {
  constexpr unsigned MaxDepth = 256; // deeper than any tree we make: a planted one
  if (depth > MaxDepth)
    return llvm::make_error<BeneathError>(shown, root.str(), ENAMETOOLONG);
  int listed = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (listed < 0)
    return llvm::make_error<BeneathError>(shown, root.str(), errno);
  DIR *stream = ::fdopendir(listed);
  if (!stream) {
    int err = errno;
    ::close(listed);
    return llvm::make_error<BeneathError>(shown, root.str(), err);
  }
  std::vector<std::string> names; // all read first: removing while reading may skip entries
  while (struct dirent *entry = ::readdir(stream))
    if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0)
      names.emplace_back(entry->d_name);
  ::closedir(stream);
  // As rm -r: an entry that will not go leaves the others to be removed;
  // the first failure is returned.
  llvm::Error first = llvm::Error::success();
  auto keep = [&](llvm::Error e) {
    if (first)
      llvm::consumeError(std::move(e));
    else
      first = std::move(e);
  };
  for (const std::string &name : names) {
    std::string path = joinPath(shown, name);
    if (::unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT)
      continue;
    if (errno != EISDIR && errno != EPERM) {
      keep(llvm::make_error<BeneathError>(path, root.str(), errno));
      continue;
    }
    FileDescriptor sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub) {
      keep(componentError(dir, name, path, root, errno));
      continue;
    }
    keep(emptyDirectory(sub.get(), path, root, depth + 1));
    if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
      keep(llvm::make_error<BeneathError>(path, root.str(), errno));
  }
  return first;
}

} // namespace

llvm::Error removeTreeBeneath(llvm::StringRef root, llvm::StringRef relative) {
  auto parent = openParentBeneath(root, relative);
  if (!parent) {
    llvm::Error e = parent.takeError();
    if (consumeIfMissing(e))
      return llvm::Error::success();
    return e;
  }
  int dir = parent->Dir.get();
  const char *name = parent->Name.c_str();
  if (::unlinkat(dir, name, 0) == 0 || errno == ENOENT) // a file, or a link as itself
    return llvm::Error::success();
  if (errno != EISDIR && errno != EPERM)
    return llvm::make_error<BeneathError>(parent->Shown, root.str(), errno);
  FileDescriptor tree(::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!tree)
    return componentError(dir, parent->Name, parent->Shown, root, errno);
  if (llvm::Error e = emptyDirectory(tree.get(), parent->Shown, root, 0))
    return e;
  if (::unlinkat(dir, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
    return llvm::make_error<BeneathError>(parent->Shown, root.str(), errno);
  return llvm::Error::success();
}

llvm::Error makeDirectoriesBeneath(llvm::StringRef root, llvm::StringRef relative) {
  auto components = split(root, relative);
  if (!components)
    return components.takeError();
  auto rootFd = openRoot(root);
  if (!rootFd)
    return rootFd.takeError();
  auto made = openComponents(rootFd->get(), root, components->Names, components->Names.size(), 0, 0,
                             /*create=*/true);
  return made ? llvm::Error::success() : made.takeError();
}

llvm::Expected<bool> existsBeneath(llvm::StringRef root, llvm::StringRef relative) {
  auto parent = openParentBeneath(root, relative);
  if (!parent) {
    llvm::Error e = parent.takeError();
    if (consumeIfMissing(e))
      return false;
    return std::move(e);
  }
  struct stat st;
  if (::fstatat(parent->Dir.get(), parent->Name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
    return true;
  if (errno == ENOENT)
    return false;
  return llvm::make_error<BeneathError>(parent->Shown, root.str(), errno);
}

void setOpenat2Enabled(bool enabled) { Openat2Enabled = enabled; }

} // namespace mlgo
