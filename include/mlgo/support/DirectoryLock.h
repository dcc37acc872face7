// One process at a time per output directory: two runs writing the same
// directory (a double submission, a requeued task whose predecessor still
// runs) would remove each other's work files and both report success.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlgo {

/// An exclusive flock(2) on `<stateDir>/lock`, held until destruction (or
/// the process' death: the kernel releases it, so a killed run never leaves
/// a stale lock). The lock file holds the owner's pid, for the message a
/// second run gets. The descriptor is close-on-exec, so compilers we start
/// do not keep the lock alive after we exit.
class DirectoryLock {
public:
  /// Creates `stateDir` if needed and takes the lock without waiting. When
  /// another process holds it: an error naming `outputDir`, the holder's pid
  /// (when the file says it) and what to do.
  static llvm::Expected<DirectoryLock> acquire(llvm::StringRef outputDir, llvm::StringRef stateDir);

  DirectoryLock() = default;
  DirectoryLock(DirectoryLock &&other) noexcept;
  DirectoryLock &operator=(DirectoryLock &&other) noexcept;
  DirectoryLock(const DirectoryLock &) = delete;
  DirectoryLock &operator=(const DirectoryLock &) = delete;
  ~DirectoryLock();

  const std::string &path() const { return Path; }

private:
  int Fd = -1;
  std::string Path;
};

} // namespace mlgo
