// The system calls that make written data durable (fdatasync, fsync,
// syncfs) all go through one replaceable hook, so that a test can observe
// which syncs are made, on what, and in which order with the writes around
// them (a sync that is missing or late loses data only at a power loss,
// which no test can stage).
#pragma once

#include "llvm/ADT/StringRef.h"

namespace mlgo {

enum class SyncCall {
  Fdatasync, // a file's data (and the metadata needed to read it back)
  Fsync,     // a file or directory, with all its metadata
  Syncfs,    // every file of the file system holding the descriptor
};

/// Receives every durability call the library makes. The default issues the
/// system call; a test derives from it to record calls (and forward them to
/// this one) or to make them fail.
class SyncHook {
public:
  virtual ~SyncHook() = default;
  /// Makes the file open as `fd` (named `path`, for messages and tests)
  /// durable as `call` says. Returns 0, or -1 with errno set.
  virtual int sync(SyncCall call, int fd, llvm::StringRef path);
};

/// Installs `hook` for the whole process (nullptr: the system calls) and
/// returns the hook it replaces (nullptr for the default). For tests: the
/// caller keeps `hook` alive until it installs another.
SyncHook *setSyncHook(SyncHook *hook);

/// Issues `call` on `fd` through the installed hook.
int issueSync(SyncCall call, int fd, llvm::StringRef path);

} // namespace mlgo
