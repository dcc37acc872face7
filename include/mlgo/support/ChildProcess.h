// Child processes in their own process group, so a hung compiler and
// everything it started can be killed together.
#pragma once

#include "mlgo/support/Landlock.h" // ReadExecRules

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace mlgo {

struct ExitStatus {
  bool Exited = false; // false: killed by a signal
  int Code = 0;        // exit code, or the signal number
  bool ok() const { return Exited && Code == 0; }
  std::string describe() const; // "exit 1", "signal 9 (Killed)"
};

struct SpawnOptions {
  std::vector<std::string> Argv;
  std::string StdoutPath = "/dev/null"; // truncated and written
  std::string StderrPath = "/dev/null";
  /// Connect the child's stdin/stdout to pipes instead (exec policies).
  bool PipeStdin = false, PipeStdout = false;
  std::string WorkingDirectory; // "" = ours
  /// Confine the child's writes to this directory (and /dev/null) with
  /// Landlock, and point its TMPDIR there; "" = not confined. Without
  /// Landlock in the kernel only TMPDIR is set (landlockSupport() says why).
  std::string ConfineWritesTo;
  std::vector<std::string> AlsoWritable; // with ConfineWritesTo: more directories the user allows
  /// With ConfineWritesTo: confine reading and executing too (a compile's
  /// toolchain, inputs and system libraries); nullopt = not confined.
  std::optional<ReadExecRules> ReadExec;
  /// "NAME=VALUE" entries that replace or join our environment in the child's.
  std::vector<std::string> Environment;
  /// With a value: the child's RLIMIT_DATA (its heap and other private
  /// writable memory, not the files it maps), so that an input crafted to
  /// make it allocate ends in its own allocation failure. 0 = no limit.
  uint64_t MemoryLimitBytes = 0;
};

/// The step at which a child failed before running its program (shared
/// with mlgo-compile-server, whose children report the same steps).
enum class SpawnStep : int {
  OpenStdin,
  OpenStdout,
  OpenStderr,
  Redirect,
  ChangeDirectory,
  Confine,
  Exec,
  Adopt,
  LimitMemory
};

/// "cannot run PROGRAM: WHAT: STRERROR" for a child that failed at `step`.
llvm::Error spawnStepError(const SpawnOptions &options, SpawnStep step, int error);

class ChildProcess {
public:
  /// Starts the child in a new process group with every signal unblocked,
  /// every handled signal and SIGPIPE, SIGINT, SIGTERM and SIGXFSZ at their
  /// default dispositions, whatever ours are; a signal sent to our process
  /// group while it starts is not passed on to it. The child is killed if
  /// this process dies. A command that cannot be run is an Error.
  static llvm::Expected<ChildProcess> spawn(const SpawnOptions &options);
  /// Takes charge of `pid`, a child of this process started by someone else
  /// (a compile server's child, adopted as its subreaper).
  static ChildProcess adopt(pid_t pid);
  ChildProcess() = default;
  ChildProcess(ChildProcess &&other) noexcept;
  ChildProcess &operator=(ChildProcess &&other) noexcept;
  ~ChildProcess();

  pid_t pid() const { return Pid; }
  int stdinFd() const { return StdinFd; }
  int stdoutFd() const { return StdoutFd; }
  void closeStdin();

  /// Non-blocking: the status once the child has exited (reaped once).
  std::optional<ExitStatus> poll();
  /// Blocks until the child exits. After killGroup() it also reaps what of
  /// the group has become ours (a policy's `sh -c` leaves its command to us
  /// as the subreaper), so that no killed process lingers as a zombie until
  /// the next reapOrphans().
  ExitStatus wait();
  /// Whether the child has exited, without reaping it (so its pid and
  /// process group cannot be reused while someone may still signal them).
  bool exitedNoReap(bool block);
  /// SIGKILL to the whole process group.
  void killGroup();
  bool running() const { return Pid > 0 && !Status; }

private:
  void reapKilledGroup();
  pid_t Pid = -1;
  int StdinFd = -1, StdoutFd = -1;
  std::optional<ExitStatus> Status;
  // Set by killGroup() (also from the watchdog's thread).
  std::atomic<bool> GroupKilled{false};
};

/// Reaps exited children of this process that no ChildProcess owns: the
/// orphans of our children (a policy's subprocess, a killed compiler's),
/// which become ours once we are a child subreaper (CompileServerClient.h).
void reapOrphans();

/// While held, reapOrphans() reaps nothing: held by whoever makes a child
/// appear outside ChildProcess::spawn until ChildProcess::adopt owns it.
class ChildRegistryHold {
public:
  ChildRegistryHold();
  ~ChildRegistryHold();
  ChildRegistryHold(const ChildRegistryHold &) = delete;
  ChildRegistryHold &operator=(const ChildRegistryHold &) = delete;
};

/// The last `bytes` of a file (for stderr tails in reports).
std::string fileTail(llvm::StringRef path, size_t bytes = 2000);

} // namespace mlgo
