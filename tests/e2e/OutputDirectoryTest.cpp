// One run per output directory (issue #20, finding 10) and work directories
// that never nest (finding 11), with the real tools and compilers.
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace mlgo::test;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const std::string Clang = MLGO_CLANG;

// Starts `command` with /bin/sh in the background, stderr to `errPath`.
pid_t startInBackground(const std::string &command, const std::string &errPath) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", ("exec " + command + " >/dev/null 2>" + quote(errPath)).c_str(), nullptr);
    ::_exit(127);
  }
  return pid;
}

// Waits up to `seconds` for `pid`; kills it if it does not end (the caller
// then fails).
std::optional<int> waitFor(pid_t pid, double seconds) {
  auto until = Clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
  int status = 0;
  while (Clock::now() < until) {
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return std::nullopt;
}

// Polls `ready` every 20 ms for up to `seconds`.
template <typename Ready> bool waitUntil(Ready ready, double seconds) {
  auto until = Clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
  while (Clock::now() < until) {
    if (ready())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ready();
}

// Kills a background run left behind by a failed assertion.
struct Reaper {
  pid_t Pid;
  ~Reaper() {
    if (Pid > 0 && ::waitpid(Pid, nullptr, WNOHANG) == 0) {
      ::kill(Pid, SIGKILL);
      ::waitpid(Pid, nullptr, 0);
    }
  }
};

class OutputDirectory : public SmallInlinerCorpusSuite {
protected:
  TempDir Work;
};

// The first harvest's first compile waits (an opt-22 wrapper, released by
// the test) while a second harvest starts on the same output directory: the
// second fails at once naming the directory and the first's pid; the first
// then finishes intact.
TEST_F(OutputDirectory, SecondHarvestOnTheSameDirectoryFailsAtOnce) {
  std::string out = Work / "out", gate = Work / "gate", started = Work / "started";
  // Only the first compile of a corpus module waits (mkdir is the atomic
  // claim); everything else (probes, the second run) runs opt-22 at once. The
  // wait is bounded (60 s) so that nothing hangs when the test fails.
  std::string opt =
      writeScript(Work / "slow-opt", "#!/bin/sh\n"
                                     "for a in \"$@\"; do case \"$a\" in " +
                                         corpus() +
                                         "/*.bc)\n"
                                         "  if mkdir " +
                                         quote(started) + " 2>/dev/null; then i=0; while [ ! -e " + quote(gate) +
                                         " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; fi;;\n"
                                         "esac; done\nexec opt-22 \"$@\"\n");
  // The wrapper's claim and gate live outside the work directory, where
  // confined compiles may not write unless the user allows it.
  std::string command = harvestCommand(corpus(), out,
                                       "--mode=interactive --opt_path=" + quote(opt) +
                                           " --compiler_writable_dir=" + quote(Work.path()));
  pid_t first = startInBackground(command, Work / "first.err");
  Reaper reaper{first};
  ASSERT_TRUE(waitUntil([&] { return exists(started); }, 60))
      << "the first harvest never compiled: " << readFile(Work / "first.err");
  auto begin = Clock::now();
  CommandResult second = run("timeout 60 " + command);
  double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  EXPECT_NE(second.ExitCode, 0) << second.Err;
  EXPECT_NE(second.Err.find("the output directory " + out + " is in use by another run"), std::string::npos)
      << second.Err;
  EXPECT_NE(second.Err.find("(pid " + std::to_string(first) + ")"), std::string::npos) << second.Err;
  EXPECT_LT(seconds, 20.0) << "the second run must fail at once, not wait";

  writeFile(gate, "");
  std::optional<int> status = waitFor(first, 120);
  ASSERT_TRUE(status.has_value()) << "the first harvest did not finish";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << readFile(Work / "first.err");
  auto journal = journalByModule(out);
  ASSERT_EQ(journal.size(), 4u);
  for (const auto &[module, record] : journal) {
    EXPECT_EQ(record["status"], "ok") << record.dump();
    if (record["log_written"].get<bool>())
      EXPECT_TRUE(exists(out + "/logs/" + module + ".log")) << module;
  }
  EXPECT_EQ(harvestSummary(out)["modules"]["ok"].get<size_t>(), 4u);

  // The lock goes with its holder: a third run on the directory works.
  CommandResult third = run(command);
  EXPECT_EQ(third.ExitCode, 0) << third.Err;
}

// extract-ir: the first run blocks opening a FIFO listed as an object (a
// read with no writer), the second on the same output directory fails at
// once; the first, released, finishes and writes its corpus.
TEST_F(OutputDirectory, SecondExtractIrOnTheSameDirectoryFailsAtOnce) {
  std::string objs = Work / "objs", out = Work / "out";
  writeFile(objs + "/a.c", "int a(int x) { return x + 2; }\n");
  mustRun(Clang + " -O2 -c -Xclang -fembed-bitcode=all a.c -o a.o", objs);
  ASSERT_EQ(::mkfifo((objs + "/fifo.o").c_str(), 0644), 0);
  writeFile(Work / "params", "a.o\nfifo.o\n");
  std::string command = tool("extract-ir") + " --input_type=params --input=" + quote(Work / "params") +
                        " --obj_base_dir=" + quote(objs) + " --num_workers=2 --output_dir=" + quote(out);
  pid_t first = startInBackground(command, Work / "first.err");
  Reaper reaper{first};
  std::string staging = out + "/.mlgo-corpus/staging." + std::to_string(first);
  ASSERT_TRUE(waitUntil([&] { return exists(staging); }, 60)) << readFile(Work / "first.err");

  // The second lists only a.o (it must not block on the FIFO itself), under
  // a deadline.
  writeFile(Work / "params2", "a.o\n");
  CommandResult second =
      run("timeout 60 " + tool("extract-ir") + " --input_type=params --input=" + quote(Work / "params2") +
          " --obj_base_dir=" + quote(objs) + " --output_dir=" + quote(out));
  EXPECT_NE(second.ExitCode, 0) << second.Err;
  EXPECT_NE(
      second.Err.find("the output directory " + out + " is in use by another run (pid " + std::to_string(first) + ")"),
      std::string::npos)
      << second.Err;

  // Release the first run: a writer opens the FIFO (non-blocking, retried
  // until the reader is there, with a deadline) and closes it at once.
  int fd = -1;
  ASSERT_TRUE(waitUntil(
      [&] {
        fd = ::open((objs + "/fifo.o").c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        return fd >= 0;
      },
      60))
      << "the first run never opened the FIFO";
  ::close(fd);
  std::optional<int> status = waitFor(first, 120);
  ASSERT_TRUE(status.has_value()) << "the first extract-ir did not finish";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << readFile(Work / "first.err");
  auto modules = nlohmann::json::parse(readFile(out + "/corpus_description.json"))["modules"];
  EXPECT_EQ(modules, nlohmann::json::array({"a.o"}));
  EXPECT_TRUE(exists(out + "/a.o.bc"));
}

// Modules `a` and `a/b` under --explicit_temps_dir: their work directories
// must not nest (starting `a` used to delete `a/b`'s while it compiled).
TEST(NestedModules, ExplicitTempsDirKeepsWorkDirectoriesApart) {
  TempDir work;
  std::string in = work / "in";
  writeFile(in + "/a.c", "static int f(int x) { return x * 3; }\nint a(int x) { return f(x) + f(x + 1); }\n");
  writeFile(in + "/a/b.c", "static int g(int x) { return x - 3; }\nint b(int x) { return g(x) * g(x + 2); }\n");
  mustRun(Clang + " -Oz -Xclang -disable-llvm-passes -c -emit-llvm a.c -o a.bc", in);
  mustRun(Clang + " -Oz -Xclang -disable-llvm-passes -c -emit-llvm b.c -o b.bc", in + "/a");
  fs::remove(in + "/a.c");
  fs::remove(in + "/a/b.c");
  std::string corpus = work / "corpus";
  mustRun(tool("make-corpus") + " --input_dir=" + quote(in) + " --output_dir=" + quote(corpus) +
          " --default_args='-Oz'");
  std::string out = work / "out", temps = work / "temps";
  for (int round = 1; round <= 3; ++round) { // the race was lost every time; three rounds to be sure
    fs::remove_all(out);
    CommandResult r =
        run(harvestCommand(corpus, out, "--mode=interactive --num_workers=2 --explicit_temps_dir=" + quote(temps)));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    auto journal = journalByModule(out);
    ASSERT_EQ(journal.size(), 2u);
    for (const char *module : {"a", "a/b"})
      EXPECT_EQ(journal[module]["status"], "ok") << round << ": " << journal[module].dump();
  }
  EXPECT_TRUE(exists(temps + "/a/native.o")) << "a's work directory";
  EXPECT_TRUE(exists(temps + "/a%2Fb/native.o")) << "a/b's work directory, beside a's, not inside it";
  EXPECT_FALSE(exists(temps + "/a/b")) << "no work directory inside another";
}

} // namespace
