#include "mlgo/support/SyncHook.h"

#include <atomic>
#include <cerrno>
#include <unistd.h>

namespace mlgo {
namespace {

std::atomic<SyncHook *> Installed{nullptr};

} // namespace

int SyncHook::sync(SyncCall call, int fd, llvm::StringRef) {
  switch (call) {
  case SyncCall::Fdatasync:
    return ::fdatasync(fd);
  case SyncCall::Fsync:
    return ::fsync(fd);
  case SyncCall::Syncfs:
    return ::syncfs(fd);
  }
  errno = EINVAL;
  return -1;
}

SyncHook *setSyncHook(SyncHook *hook) { return Installed.exchange(hook); }

int issueSync(SyncCall call, int fd, llvm::StringRef path) {
  static SyncHook System;
  SyncHook *hook = Installed.load();
  return (hook ? hook : &System)->sync(call, fd, path);
}

} // namespace mlgo
