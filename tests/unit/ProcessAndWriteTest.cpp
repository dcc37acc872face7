// Write errors as values, moves across file systems, and the shared watchdog.
#include "mlgo/support/ChildProcess.h"
#include "mlgo/support/MoveFile.h"
#include "mlgo/support/OutputFile.h"
#include "mlgo/support/Watchdog.h"

#include "support/Deadline.h"
#include "support/TestSupport.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

size_t threadCount() {
  size_t n = 0;
  for ([[maybe_unused]] const auto &entry : fs::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}

// /dev/full fails every write with ENOSPC, as a full disk does.
TEST(OutputFile, AFailedWriteIsAnErrorNotAnAbort) {
  {
    OutputFile full("/dev/full");
    ASSERT_FALSE(static_cast<bool>(full.openError()));
    full << std::string(1 << 20, 'x');
    llvm::Error e = full.finish();
    ASSERT_TRUE(e.isA<WriteError>());
    llvm::handleAllErrors(std::move(e), [](const WriteError &w) {
      EXPECT_TRUE(w.fileSystemUnusable());
      EXPECT_NE(w.message().find("/dev/full"), std::string::npos) << w.message();
      EXPECT_NE(w.message().find("No space left on device"), std::string::npos) << w.message();
    });
  }
  {
    // Dropped with an unchecked error (an early return): LLVM's stream would
    // call report_fatal_error here and end the test binary.
    OutputFile dropped("/dev/full");
    dropped << std::string(1 << 20, 'x');
    dropped.flush();
    EXPECT_TRUE(dropped.has_error());
  }
  TempDir dir;
  OutputFile missing(dir / "no/such/dir/f");
  llvm::Error e = missing.openError();
  ASSERT_TRUE(e.isA<WriteError>());
  EXPECT_NE(llvm::toString(std::move(e)).find("no/such/dir/f"), std::string::npos);
}

TEST(MoveFile, AcrossFileSystemsTheDataArrivesAndTheSourceGoes) {
  TempDir dir;
  std::string shm = "/dev/shm/mlgo-move-" + std::to_string(::getpid());
  struct stat a {
  }, b{};
  if (::mkdir(shm.c_str(), 0700) != 0 || ::stat(shm.c_str(), &a) != 0 || ::stat(dir.path().c_str(), &b) != 0 ||
      a.st_dev == b.st_dev)
    GTEST_SKIP() << "no second file system (/dev/shm)";
  std::string data(3 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<char>(i * 7919 >> 3);
  writeFile(shm + "/log", data);
  writeFile(dir / "log", "an older version");
  ASSERT_FALSE(static_cast<bool>(moveFile(shm + "/log", dir / "log")));
  EXPECT_EQ(readFile(dir / "log"), data);
  EXPECT_FALSE(exists(shm + "/log"));
  EXPECT_EQ(listTree(dir.path()), (std::set<std::string>{"log"})); // no temporary left
  fs::remove_all(shm);
  // Same file system: a plain rename; a missing source is an error.
  writeFile(dir / "a", "x");
  ASSERT_FALSE(static_cast<bool>(moveFile(dir / "a", dir / "b")));
  EXPECT_EQ(readFile(dir / "b"), "x");
  EXPECT_TRUE(static_cast<bool>(llvm::errorToBool(moveFile(dir / "a", dir / "c"))));
}

// Eight children watched at once, with deadlines 100 ms apart: each is killed
// at its own deadline, and all of them by one thread. (A child the watchdog
// misses ends by itself after 30 s: the wait below is bounded, and the test
// fails on its timing, well within CTest's timeout.)
TEST(Watchdog, OneThreadKillsEachChildAtItsDeadline) {
  std::vector<ChildProcess> children;
  for (int i = 0; i < 8; ++i) {
    auto child = ChildProcess::spawn({{"sleep", "30"}});
    ASSERT_TRUE(static_cast<bool>(child)) << llvm::toString(child.takeError());
    children.push_back(std::move(*child));
  }
  Watch warmUp(children[0], Clock::now() + std::chrono::hours(1)); // the watchdog thread exists from here on
  warmUp.disarm();
  size_t threadsBefore = threadCount();
  auto start = Clock::now();
  std::vector<std::unique_ptr<Watch>> watches;
  for (int i = 0; i < 8; ++i)
    watches.push_back(std::make_unique<Watch>(children[i], start + std::chrono::milliseconds(300 + 100 * i)));
  EXPECT_EQ(threadCount(), threadsBefore) << "a watch must not start a thread";
  for (int i = 0; i < 8; ++i) {
    children[i].exitedNoReap(true);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_GE(seconds, 0.3 + 0.1 * i - 0.01) << i;
    EXPECT_LT(seconds, 0.3 + 0.1 * i + 2.0) << i; // a loaded machine may be late, not early
    watches[i]->disarm();
    EXPECT_TRUE(watches[i]->timedOut()) << i;
    EXPECT_FALSE(watches[i]->interrupted()) << i;
    ExitStatus status = children[i].wait();
    EXPECT_FALSE(status.Exited);
    EXPECT_EQ(status.Code, SIGKILL);
  }
  // Disarmed before its deadline: never fires.
  auto child = ChildProcess::spawn({{"sleep", "0.5"}});
  ASSERT_TRUE(static_cast<bool>(child));
  {
    Watch late(*child, Clock::now() + std::chrono::milliseconds(100));
    late.disarm();
    EXPECT_FALSE(late.fired());
  }
  EXPECT_TRUE(child->wait().ok());
}

} // namespace

namespace {

std::atomic<int> HandlerRunsElsewhere{0}, HandlerRuns{0};
pid_t ExperimentPid = 0;

void countingHandler(int) {
  // In a vfork child sharing our memory, getpid() is the child's.
  if (::getpid() != ExperimentPid)
    HandlerRunsElsewhere.fetch_add(1);
  else
    HandlerRuns.fetch_add(1);
}

// Ctrl-C reaches the whole process group, including a child that has been
// forked but has not yet moved to its own group. No handler of ours may run
// in such a child: it shares our memory until it execs (vfork), so the
// handler's effects (the interrupt flag: "a second signal, exit at once")
// would land in the parent. Spawns in a loop from two threads while a
// third signals the process group, in a forked process with a group of its own.
TEST(ChildProcess, NoHandlerOfOursRunsInAStartingChild) {
  pid_t experiment = ::fork();
  if (experiment == 0) {
    ::setpgid(0, 0);
    ExperimentPid = ::getpid();
    struct sigaction action {};
    action.sa_handler = countingHandler;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, nullptr);
    std::atomic<bool> stop{false};
    auto spawner = [&] {
      while (!stop) {
        auto child = ChildProcess::spawn({{"/bin/true"}});
        if (child)
          child->wait();
      }
    };
    std::thread a(spawner), b(spawner);
    for (int i = 0; i < 1500 && HandlerRunsElsewhere == 0; ++i) {
      ::kill(0, SIGINT);
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    stop = true;
    a.join();
    b.join();
    ::_exit(HandlerRunsElsewhere > 0 ? 1 : HandlerRuns > 0 ? 0 : 2);
  }
  ASSERT_GT(experiment, 0);
  int status = 0;
  ASSERT_TRUE(waitForExit(experiment, GenerousDeadline, status));
  ASSERT_TRUE(WIFEXITED(status)) << "the experiment died of signal " << WTERMSIG(status);
  EXPECT_NE(WEXITSTATUS(status), 1) << "our SIGINT handler ran in a child between vfork and exec";
  EXPECT_NE(WEXITSTATUS(status), 2) << "the signals never reached the experiment";
}

// An exec policy is `sh -c COMMAND`, and dash forks COMMAND. Killed with
// its group, the command is handed to us (the compile server makes us a
// subreaper) and once stayed a zombie until the next module ended, five
// seconds later in CI (HarvestRobustness.PolicyThatStopsReadingIsKilledAtTheDeadline).
// Run in a forked process, so that only it is a subreaper.
TEST(ChildProcess, AKilledGroupLeavesNoZombieBehindItsLeader) {
  pid_t experiment = ::fork();
  if (experiment == 0) {
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
      ::_exit(3);
    auto shell = ChildProcess::spawn({{"/bin/sh", "-c", "sleep 1000 1; :"}});
    if (!shell)
      ::_exit(4);
    std::string children =
        "/proc/" + std::to_string(shell->pid()) + "/task/" + std::to_string(shell->pid()) + "/children";
    auto until = Clock::now() + std::chrono::seconds(20);
    while (readFile(children).empty() && Clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (readFile(children).empty())
      ::_exit(5); // the shell never started its command
    shell->killGroup();
    shell->wait();
    // Nothing reaps it later in here: a child seen now (of any of our
    // threads: an adopted one may join another's list) is a leftover.
    auto anyChild = [] {
      for (const auto &task : fs::directory_iterator("/proc/self/task"))
        if (!readFile(task.path() / "children").empty())
          return true;
      return false;
    };
    for (int i = 0; i < 50; ++i) {
      if (anyChild())
        ::_exit(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::_exit(0);
  }
  ASSERT_GT(experiment, 0);
  int status = 0;
  ASSERT_TRUE(waitForExit(experiment, GenerousDeadline, status));
  ASSERT_TRUE(WIFEXITED(status)) << "the experiment died of signal " << WTERMSIG(status);
  EXPECT_NE(WEXITSTATUS(status), 1) << "the shell's killed command stayed our unreaped child";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ChildProcess, TheEnvironmentOptionReplacesOrAddsVariablesAndConfinementSetsTmpdir) {
  TempDir dir;
  ::setenv("MLGO_TEST_REPLACED", "ours", 1);
  ::setenv("MLGO_TEST_KEPT", "kept", 1);
  SpawnOptions options;
  options.Argv = {"/bin/sh", "-c", "env | grep '^MLGO_TEST_\\|^TMPDIR=' | sort"};
  options.StdoutPath = dir / "out";
  options.Environment = {"MLGO_TEST_REPLACED=theirs", "MLGO_TEST_ADDED=new"};
  options.ConfineWritesTo = dir.path();
  auto child = ChildProcess::spawn(options);
  ASSERT_TRUE(static_cast<bool>(child)) << llvm::toString(child.takeError());
  EXPECT_TRUE(child->wait().ok());
  EXPECT_EQ(readFile(dir / "out"),
            "MLGO_TEST_ADDED=new\nMLGO_TEST_KEPT=kept\nMLGO_TEST_REPLACED=theirs\nTMPDIR=" + dir.path() + "\n");
  ::unsetenv("MLGO_TEST_REPLACED");
  ::unsetenv("MLGO_TEST_KEPT");
}

} // namespace
