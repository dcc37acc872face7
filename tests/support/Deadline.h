// Waiting in tests. Every wait has a deadline, and a wait that expires fails
// the test, naming what it waited for: it neither gives up silently (and
// goes on without its precondition) nor blocks until CTest's timeout.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace mlgo::test {

using Clock = std::chrono::steady_clock;

/// Long enough for anything a test waits for on a loaded 2-core machine
/// running the sanitizer build; a hang costs this much, then fails.
inline constexpr std::chrono::seconds GenerousDeadline{120};

/// Polls `condition` every `poll` until it holds; fails, saying `what` was
/// not reached in `timeout`, when it never does.
::testing::AssertionResult waitUntil(const std::function<bool()> &condition, std::chrono::milliseconds timeout,
                                     const std::string &what,
                                     std::chrono::milliseconds poll = std::chrono::milliseconds(10));

/// waitpid with a deadline: `status` gets the wait status. When `pid` has
/// not ended by then, it (and the process group it leads, if any) is
/// SIGKILLed and reaped, and the wait fails.
::testing::AssertionResult waitForExit(pid_t pid, std::chrono::milliseconds timeout, int &status);

/// A wait status as a shell reports it: the exit code, or 128 + the signal.
int shellExitCode(int status);

/// Opens the write end of the FIFO `path` once a reader has opened it,
/// never blocking: a non-blocking open fails (ENXIO) while no reader has it
/// open, and is retried until `timeout`. `fd` is a blocking descriptor.
::testing::AssertionResult openFifoForWriting(const std::string &path, std::chrono::milliseconds timeout, int &fd);

/// A shell command started in the background, in a process group of its own
/// (so a signal to the group reaches it as a Ctrl-C would), stdin from
/// /dev/null, stdout and stderr to `stdoutPath`/`stderrPath`. If it is still
/// running when destroyed (a failed assertion returned early), the whole
/// group is SIGKILLed and reaped: a failing test leaves nothing behind.
class BackgroundCommand {
public:
  explicit BackgroundCommand(const std::string &command, const std::string &stderrPath = "/dev/null",
                             const std::string &stdoutPath = "/dev/null");
  /// `argv` run directly, without a shell (whose own signal handlers would
  /// be seen until it execs).
  explicit BackgroundCommand(const std::vector<std::string> &argv, const std::string &stderrPath = "/dev/null",
                             const std::string &stdoutPath = "/dev/null");
  ~BackgroundCommand();
  BackgroundCommand(const BackgroundCommand &) = delete;
  BackgroundCommand &operator=(const BackgroundCommand &) = delete;

  pid_t pid() const { return Pid; }
  bool running() const { return !Reaped; }
  /// Sends `signal` to the process (`group`: to its whole process group).
  void signal(int signal, bool group = false);
  /// Waits up to `timeout` for it to end; see waitForExit.
  ::testing::AssertionResult wait(std::chrono::milliseconds timeout, int &status);
  /// Whether it has ended (reaping it if so; wait() then returns at once).
  bool exited();

private:
  void start(const std::vector<std::string> &argv, const std::string &stderrPath, const std::string &stdoutPath);
  pid_t Pid = -1;
  bool Reaped = false;
  std::optional<int> Status; // once reaped by exited()
};

} // namespace mlgo::test
