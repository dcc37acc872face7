// Helpers for tests that run the real tools on files made during the test.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

namespace mlgo::test {

struct CommandResult {
  int ExitCode = -1;
  std::string Out, Err;
};

/// How long one command of a test may run: a hung tool is killed (with
/// everything it started) and the test fails naming the command, before
/// CTest's timeout would kill the test and leave the tool running.
inline constexpr std::chrono::seconds CommandDeadline{240};

/// Runs `command` with /bin/sh in `cwd` (if not empty), capturing stdout and
/// stderr. A command still running after `deadline` is killed: ExitCode 124,
/// and Err says so.
CommandResult run(const std::string &command, const std::string &cwd = "",
                  std::chrono::seconds deadline = CommandDeadline);

/// Runs `command` and fails the test (with its stderr) unless it exits 0.
void mustRun(const std::string &command, const std::string &cwd = "");

std::string quote(const std::string &text);
std::string tool(const std::string &name); // a built tool in the bin dir

/// A fresh directory, removed at destruction unless MLGO_KEEP_TEST_DIRS is set.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return Path; }
  std::string operator/(const std::string &rel) const { return Path + "/" + rel; }

private:
  std::string Path;
};

std::string readFile(const std::string &path);
void writeFile(const std::string &path, const std::string &data); // makes parent dirs
bool exists(const std::string &path);
/// Every file and directory below `dir`, relative, sorted; directories end in '/'.
std::set<std::string> listTree(const std::string &dir, bool includeHidden = false);

/// Writes an executable script.
std::string writeScript(const std::string &path, const std::string &body);

/// How many live processes (other than this one) have `needle` in their
/// command line; zombies, which have none, do not count.
size_t processesMentioning(const std::string &needle);

/// The command lines (arguments joined by spaces) of the live children of
/// `parent`.
std::vector<std::string> childCommandLines(int parent);

/// Whether the tests (and so the tools) are built with AddressSanitizer.
constexpr bool sanitizerBuild() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

/// Prefix for a command run under strace (or any ptrace): LeakSanitizer
/// cannot work under ptrace and would fail the traced tool at exit.
inline const std::string NoLeakCheckUnderPtrace = "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 ";

/// Compiles C source text to an object with clang-22 and embedded bitcode.
void compileC(const std::string &source, const std::string &object, const std::string &flags = "-O2");

/// `values` as llvm-ir2vec-22 prints an embedding: two decimals, one space between.
std::string twoDecimals(const std::vector<double> &values);

} // namespace mlgo::test
