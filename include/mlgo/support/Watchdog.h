// One thread that kills the process group of every watched child whose
// deadline has passed, or of all of them once an interrupt is requested;
// however many workers compile at once, they share it.
#pragma once

#include "mlgo/support/ChildProcess.h"

#include <atomic>
#include <chrono>

namespace mlgo {

/// Watches one child from construction until disarm() (or destruction).
/// The child must not be reaped while it is watched, so that its pid and
/// process group still name it when the watchdog kills them.
class Watch {
public:
  Watch(ChildProcess &child, std::chrono::steady_clock::time_point until);
  ~Watch() { disarm(); }
  Watch(const Watch &) = delete;
  Watch &operator=(const Watch &) = delete;

  /// After this returns the watchdog no longer touches the child.
  void disarm();
  bool timedOut() const { return TimedOut; }
  bool interrupted() const { return Interrupted; }
  bool fired() const { return TimedOut || Interrupted; }

private:
  friend class WatchdogThread;
  ChildProcess &Child;
  std::chrono::steady_clock::time_point Until;
  std::atomic<bool> TimedOut{false}, Interrupted{false};
};

} // namespace mlgo
