// Observing the real tools' system calls: a command run under
// `strace -f -y` (every process and thread it starts), its trace parsed
// into calls in the order they happened, so an e2e test can check which
// syncs, renames and writes the tools make and in which order.
#pragma once

#include "TestSupport.h"

#include <string>
#include <sys/types.h>
#include <vector>

namespace mlgo::test {

struct TracedCall {
  pid_t Pid = 0;
  std::string Name;              // "write", "fdatasync", "renameat2", ...
  std::vector<std::string> Args; // the argument texts, as strace printed them
  std::string FdPath;            // the first argument's file, when it is a descriptor (strace -y)
  std::string Data;              // write: the bytes written, decoded
  std::string From, To;          // rename, renameat, renameat2, link, linkat: absolute paths
  long long Result = -1;         // the return value (-1 also when the call never returned)
  bool Finished = false;         // false: the process ended inside the call
  // Positions in the trace: this call ended before `other` began when End < other.Start.
  size_t Start = 0, End = 0;

  bool before(const TracedCall &other) const { return End < other.Start; }
};

struct TraceResult {
  CommandResult Run;
  std::vector<TracedCall> Calls;
  std::string Raw; // the trace as strace wrote it, for failure messages
};

/// Whether strace can trace a child here (installed; ptrace allowed).
bool straceWorks(std::string &why);

/// Runs `command` (with /bin/sh, like run()) under strace, tracing only
/// `syscalls` (e.g. {"fsync", "fdatasync", "syncfs", "write"}) in every
/// process and thread it starts. The run's exit status and output are those
/// of `command`. Leak checking is off in the traced processes: a sanitizer
/// build's LeakSanitizer cannot run under ptrace.
/// `straceOptions` are added to strace's own (e.g. "-e inject=fdatasync:delay_exit=400000",
/// which makes every fdatasync take 0.4 s longer).
TraceResult runTraced(const std::string &command, const std::vector<std::string> &syscalls, const std::string &cwd = "",
                      const std::string &straceOptions = "");

/// Decodes one strace string literal (without its quotes): \n, \t, \", \\,
/// octal \NNN and hex \xHH escapes.
std::string decodeStraceString(const std::string &text);

/// Parses a trace written by `strace -f -y -qq -e signal=none`; malformed
/// lines fail the test (a parser that skipped them could hide a call).
std::vector<TracedCall> parseStrace(const std::string &trace);

/// The calls named `name` (any of `names`) in trace order.
std::vector<TracedCall> callsNamed(const std::vector<TracedCall> &calls, const std::vector<std::string> &names);

/// Calls that make data durable: fsync, fdatasync, syncfs (and sync).
bool isSync(const TracedCall &call);

} // namespace mlgo::test
