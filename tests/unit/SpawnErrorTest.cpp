// A child that cannot start says which step failed: opening a redirection
// file, changing directory, or exec (issue #20, finding 11: a missing work
// directory used to read "cannot run opt-22: No such file or directory").
#include "mlgo/support/ChildProcess.h"

#include "support/TestSupport.h"

#include <unistd.h>

using namespace mlgo;
using namespace mlgo::test;

namespace {

std::string spawnFailure(const SpawnOptions &options) {
  auto child = ChildProcess::spawn(options);
  if (child) {
    child->wait();
    return "";
  }
  return llvm::toString(child.takeError());
}

TEST(SpawnError, MissingStderrDirectoryNamesTheStderrFile) {
  TempDir dir;
  SpawnOptions options;
  options.Argv = {"true"};
  options.StderrPath = dir / "gone/stderr.txt";
  std::string message = spawnFailure(options);
  EXPECT_NE(message.find("cannot open the standard error file " + options.StderrPath), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST(SpawnError, UnwritableStdoutNamesTheStdoutFile) {
  TempDir dir;
  writeFile(dir / "adir/x", "");
  SpawnOptions options;
  options.Argv = {"true"};
  options.StdoutPath = dir / "adir"; // a directory cannot be opened for writing
  std::string message = spawnFailure(options);
  EXPECT_NE(message.find("cannot open the standard output file " + options.StdoutPath), std::string::npos) << message;
  EXPECT_NE(message.find("Is a directory"), std::string::npos) << message;
}

// A redirection file planted as a symbolic link (OUT/policy.0.stderr ->
// a user's file) is refused, never truncated through (issue 33).
TEST(SpawnError, ARedirectionFileThatIsASymbolicLinkIsNotFollowed) {
  TempDir dir;
  writeFile(dir / "victim", "the user's file\n");
  ASSERT_EQ(::symlink((dir / "victim").c_str(), (dir / "err").c_str()), 0);
  ASSERT_EQ(::symlink((dir / "victim").c_str(), (dir / "out").c_str()), 0);
  for (bool stdoutToo : {false, true}) {
    SpawnOptions options;
    options.Argv = {"sh", "-c", "echo pwned; echo pwned >&2"};
    (stdoutToo ? options.StdoutPath : options.StderrPath) = stdoutToo ? dir / "out" : dir / "err";
    std::string message = spawnFailure(options);
    EXPECT_NE(message.find(stdoutToo ? dir / "out" : dir / "err"), std::string::npos) << message;
    EXPECT_EQ(readFile(dir / "victim"), "the user's file\n");
  }
}

TEST(SpawnError, MissingWorkingDirectoryNamesTheDirectory) {
  TempDir dir;
  SpawnOptions options;
  options.Argv = {"true"};
  options.WorkingDirectory = dir / "removed-work-dir";
  std::string message = spawnFailure(options);
  EXPECT_NE(message.find("cannot change to the working directory " + options.WorkingDirectory), std::string::npos)
      << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST(SpawnError, MissingProgramSaysExec) {
  SpawnOptions options;
  options.Argv = {"mlgo-no-such-program-xyz"};
  std::string message = spawnFailure(options);
  EXPECT_NE(message.find("cannot run mlgo-no-such-program-xyz: cannot execute: No such file or directory"),
            std::string::npos)
      << message;
}

TEST(SpawnError, NonExecutableProgramSaysExecAndPermission) {
  TempDir dir;
  writeFile(dir / "prog", "#!/bin/sh\nexit 0\n"); // mode 0644
  SpawnOptions options;
  options.Argv = {dir / "prog"};
  std::string message = spawnFailure(options);
  EXPECT_NE(message.find("cannot execute: Permission denied"), std::string::npos) << message;
}

TEST(SpawnError, AWorkingChildStillRuns) {
  TempDir dir;
  SpawnOptions options;
  options.Argv = {"sh", "-c", "pwd; echo err >&2"};
  options.WorkingDirectory = dir.path();
  options.StdoutPath = dir / "out";
  options.StderrPath = dir / "err";
  auto child = ChildProcess::spawn(options);
  ASSERT_TRUE(static_cast<bool>(child)) << llvm::toString(child.takeError());
  EXPECT_TRUE(child->wait().ok());
  EXPECT_EQ(readFile(dir / "err"), "err\n");
}

} // namespace
