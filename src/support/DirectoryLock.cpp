#include "mlgo/support/DirectoryLock.h"

#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <utility>

namespace mlgo {
namespace {

// The pid the holder wrote, if the file holds one (read through our own
// descriptor: a short, bounded read).
std::string holderPid(int fd) {
  char text[32] = {};
  ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  if (n <= 0)
    return "";
  llvm::StringRef pid = llvm::StringRef(text, static_cast<size_t>(n)).trim();
  unsigned long value;
  if (pid.empty() || pid.getAsInteger(10, value))
    return "";
  return pid.str();
}

} // namespace

llvm::Expected<DirectoryLock> DirectoryLock::acquire(llvm::StringRef outputDir, llvm::StringRef stateDir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(stateDir))
    return llvm::createStringError(ec, "cannot create %s: %s", stateDir.str().c_str(), ec.message().c_str());
  DirectoryLock lock;
  lock.Path = joinPath(stateDir, "lock");
  lock.Fd = ::open(lock.Path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (lock.Fd < 0) {
    int err = errno;
    return llvm::createStringError(std::error_code(err, std::generic_category()), "cannot open the lock file %s: %s",
                                   lock.Path.c_str(), std::strerror(err));
  }
  int result;
  while ((result = ::flock(lock.Fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (result != 0) {
    int err = errno;
    if (err == EWOULDBLOCK) {
      std::string pid = holderPid(lock.Fd);
      return llvm::createStringError(
          std::make_error_code(std::errc::resource_unavailable_try_again),
          "the output directory %s is in use by another run%s (lock %s); wait for it to finish, or use another "
          "output directory",
          outputDir.str().c_str(), pid.empty() ? "" : (" (pid " + pid + ")").c_str(), lock.Path.c_str());
    }
    return llvm::createStringError(std::error_code(err, std::generic_category()), "cannot lock %s: %s",
                                   lock.Path.c_str(), std::strerror(err));
  }
  // Ours now: record who holds it. A failure here only loses the pid in a
  // second run's message.
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock.Fd, 0) == 0) {
    [[maybe_unused]] ssize_t n = ::pwrite(lock.Fd, pid.data(), pid.size(), 0);
  }
  return lock;
}

DirectoryLock::DirectoryLock(DirectoryLock &&other) noexcept { *this = std::move(other); }

DirectoryLock &DirectoryLock::operator=(DirectoryLock &&other) noexcept {
  std::swap(Fd, other.Fd);
  std::swap(Path, other.Path);
  return *this;
}

DirectoryLock::~DirectoryLock() {
  // Closing the last descriptor releases the flock. The file stays: removing
  // it would let a third run lock a new file while a second holds the old.
  if (Fd >= 0)
    ::close(Fd);
}

} // namespace mlgo
