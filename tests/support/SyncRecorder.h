// Observing the library's durability calls in-process: a SyncHook that
// records every fdatasync/fsync/syncfs (forwarding it to the system), with a
// snapshot of whatever the test wants to know at that moment (a journal's
// line count, a file's contents), so that a test can check which syncs were
// made and their order with the writes around them.
#pragma once

#include "mlgo/support/SyncHook.h"

#include <cerrno>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::test {

struct SyncEvent {
  SyncCall Call;
  std::string Path;
  bool Directory = false; // the descriptor is a directory
  std::string Snapshot;   // what the recorder's Observe returned at the call
};

/// Installed for its lifetime (restoring the previous hook after).
class SyncRecorder : public SyncHook {
public:
  SyncRecorder();
  ~SyncRecorder() override;
  SyncRecorder(const SyncRecorder &) = delete;
  SyncRecorder &operator=(const SyncRecorder &) = delete;

  int sync(SyncCall call, int fd, llvm::StringRef path) override;

  /// Called at each sync, before it is issued; its result is the event's Snapshot.
  std::function<std::string(const SyncEvent &)> Observe;
  /// When set, every sync fails with this errno instead (after being recorded).
  std::optional<int> FailWith;

  std::vector<SyncEvent> events() const;
  void clear();

private:
  SyncHook *Previous;
  mutable std::mutex Mutex;
  std::vector<SyncEvent> Events;
};

/// "fdatasync", "fsync" or "syncfs".
const char *syncCallName(SyncCall call);
/// One event per line ("fdatasync PATH [snapshot]"), for failure messages.
std::string describe(const std::vector<SyncEvent> &events);

} // namespace mlgo::test
