#include "mlgo/support/MoveFile.h"

#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/OutputFile.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/SyncHook.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace mlgo {
namespace {

// `to` is `name` in the open directory `dir`, or the path itself (AT_FDCWD).
// Reads `in` (closed here) from where it stands; `from` names it.
llvm::Error copyDescriptorThenRename(int in, const std::string &from, int dir, const std::string &name,
                                     const std::string &to) {
  std::string temporary = temporaryNameIn(dirName(name), baseName(name));
  int out = ::openat(dir, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0) {
    int err = errno;
    ::close(in);
    return llvm::make_error<WriteError>(joinPath(dirName(to), baseName(temporary)),
                                        std::error_code(err, std::generic_category()));
  }
  int failure = 0; // errno of the first failed write
  bool readFailed = false;
  int readErrno = 0;
  char buffer[1 << 16];
  while (!failure && !readFailed) {
    ssize_t got = ::read(in, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      readFailed = got < 0;
      readErrno = errno;
      break;
    }
    for (ssize_t done = 0; done < got && !failure;) {
      ssize_t n = ::write(out, buffer + done, static_cast<size_t>(got - done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        failure = n < 0 ? errno : ENOSPC;
      else
        done += n;
    }
  }
  ::close(in);
  // The copy must be on disk before its name replaces anything (when durable:
  // --no_fsync makes no sync at all).
  if (!failure && !readFailed && durableWrites() && issueSync(SyncCall::Fdatasync, out, temporary) != 0)
    failure = errno;
  if (::close(out) != 0 && !failure)
    failure = errno;
  if (failure || readFailed) {
    ::unlinkat(dir, temporary.c_str(), 0);
    if (readFailed)
      return llvm::createStringError(std::error_code(readErrno, std::generic_category()), "cannot read %s: %s",
                                     from.c_str(), std::strerror(readErrno));
    return llvm::make_error<WriteError>(to, std::error_code(failure, std::generic_category()));
  }
  if (::renameat(dir, temporary.c_str(), dir, name.c_str()) != 0) {
    int err = errno;
    ::unlinkat(dir, temporary.c_str(), 0);
    return llvm::make_error<WriteError>(to, std::error_code(err, std::generic_category()));
  }
  return llvm::Error::success();
}

llvm::Error copyThenRename(const std::string &from, int dir, const std::string &name, const std::string &to,
                           bool removeSource) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "cannot read %s: %s", from.c_str(),
                                   std::strerror(errno));
  if (llvm::Error e = copyDescriptorThenRename(in, from, dir, name, to))
    return e;
  if (removeSource)
    ::unlink(from.c_str());
  return llvm::Error::success();
}

} // namespace

llvm::Error moveFile(llvm::StringRef from, llvm::StringRef to) {
  std::string source = from.str(), destination = to.str();
  if (::rename(source.c_str(), destination.c_str()) == 0)
    return llvm::Error::success();
  if (errno == EXDEV)
    return copyThenRename(source, AT_FDCWD, destination, destination, /*removeSource=*/true);
  return llvm::make_error<WriteError>(destination, std::error_code(errno, std::generic_category()));
}

llvm::Error moveFileInto(llvm::StringRef from, int dir, llvm::StringRef name, llvm::StringRef shownTo) {
  std::string source = from.str(), component = name.str(), shown = shownTo.str();
  if (::renameat(AT_FDCWD, source.c_str(), dir, component.c_str()) == 0)
    return llvm::Error::success();
  if (errno == EXDEV)
    return copyThenRename(source, dir, component, shown, /*removeSource=*/true);
  return llvm::make_error<WriteError>(shown, std::error_code(errno, std::generic_category()));
}

llvm::Error copyFileInto(llvm::StringRef from, int dir, llvm::StringRef name, llvm::StringRef shownTo) {
  return copyThenRename(from.str(), dir, name.str(), shownTo.str(), /*removeSource=*/false);
}

llvm::Error copyDescriptorInto(int from, llvm::StringRef shownFrom, int dir, llvm::StringRef name,
                               llvm::StringRef shownTo) {
  if (::lseek(from, 0, SEEK_SET) < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "cannot read %s: %s",
                                   shownFrom.str().c_str(), std::strerror(errno));
  int in = ::dup(from);
  if (in < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "cannot read %s: %s",
                                   shownFrom.str().c_str(), std::strerror(errno));
  return copyDescriptorThenRename(in, shownFrom.str(), dir, name.str(), shownTo.str());
}

} // namespace mlgo
