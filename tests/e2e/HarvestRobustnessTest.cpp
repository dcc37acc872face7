// harvest-logs under the faults a long run meets: a file size limit, a full
// output file system, a policy process that stops reading, a Ctrl-C sent to
// the whole process group while real compilers start and run, a temps dir
// on another file system. Real opt-22/llc-22 throughout.
#include "support/Deadline.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace mlgo::test;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const std::string Harvest = tool("harvest-logs");

// The children of `parent` that have exited and not been reaped.
std::set<std::string> zombieChildren(pid_t parent) {
  std::set<std::string> zombies;
  for (const auto &entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::string stat = readFile(entry.path().string() + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos)
      continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid == parent && state == "Z")
      zombies.insert(name);
  }
  return zombies;
}

// How long the processes of a stopped run may take to go away.
constexpr std::chrono::seconds ProcessesDieWithin{10};

// Whether `pid` has a handler for SIGINT yet (it cannot be interrupted
// cleanly before it installs one).
bool catchesSigint(pid_t pid) {
  std::istringstream in(readFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("SigCgt:", 0) == 0)
      return (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1)) & 1;
  return false;
}

class HarvestRobustness : public InlinerCorpusSuite {
protected:
  std::vector<std::string> harvestArgv(const std::string &out, std::vector<std::string> flags) {
    std::vector<std::string> argv = {Harvest, "--mode=interactive", "--progress_interval=0", "--corpus=" + corpus(),
                                     "--output_dir=" + out};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return argv;
  }
  std::string harvest(const std::string &out, const std::string &flags = "") {
    // The harvester's own pipes and writes are under test: the interactive channel.
    return harvestCommand(corpus(), out, "--mode=interactive " + flags);
  }

  // Every ok module with a log (log_written) has it, holding exactly the journal's
  // decisions; every log is an ok module's; no other status is recorded.
  void expectJournalMatchesLogs(const std::string &out, const std::string &what) {
    auto j = journalByModule(out);
    std::set<std::string> expected;
    for (auto &[module, line] : j) {
      EXPECT_EQ(line["status"], "ok") << what << ": an interrupt must not be recorded as a failure: " << line.dump();
      if (line["status"] == "ok" && line["log_written"].get<bool>()) {
        expected.insert(module + ".log");
        EXPECT_EQ(readObservations(out + "/logs/" + module + ".log").size(), line["decisions"].get<size_t>())
            << what << " " << module;
      }
    }
    EXPECT_EQ(listTree(out + "/logs"), expected) << what;
  }

  TempDir Work;
};

// Defect: an unchecked raw_fd_ostream error aborted the whole run ("LLVM
// ERROR: IO failure on output stream"), or SIGXFSZ killed it.
TEST_F(HarvestRobustness, FileSizeLimitCostsOnlyTheModulesThatExceedIt) {
  // Logs: m1 ~96 KiB, m2 ~190 KiB, m3 ~280 KiB, m4 ~375 KiB; compiler outputs
  // stay under 80 KiB. A 240 KiB limit fails exactly m3 and m4.
  std::string out = Work / "limited";
  CommandResult r = run("prlimit --fsize=" + std::to_string(240 * 1024) + " " + harvest(out, "--num_workers=2"));
  EXPECT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(r.Err.find("LLVM ERROR"), std::string::npos) << r.Err;
  auto j = journalByModule(out);
  ASSERT_EQ(j.size(), 4u) << r.Err;
  for (const char *module : {"m3.o", "m4.o"}) {
    EXPECT_EQ(j[module]["status"], "failed") << j[module].dump();
    EXPECT_EQ(j[module]["reason"], "write_failed") << j[module].dump();
    EXPECT_NE(j[module]["detail"].get<std::string>().find("File too large"), std::string::npos) << j[module].dump();
    EXPECT_FALSE(exists(out + "/logs/" + module + ".log"));
  }
  for (const char *module : {"m1.o", "m2.o"}) {
    EXPECT_EQ(j[module]["status"], "ok") << j[module].dump();
    EXPECT_EQ(readObservations(out + "/logs/" + module + ".log").size(), j[module]["decisions"].get<size_t>());
  }
  nlohmann::json s = harvestSummary(out);
  EXPECT_EQ(s["modules"]["ok"], 2) << s.dump();
  EXPECT_EQ(s["modules"]["failed"], 2) << s.dump();
  EXPECT_FALSE(s.contains("stopped")) << s.dump();
}

// A full output file system fails every later write: the run stops after
// the module that met it, keeps what it wrote before, and says so.
TEST_F(HarvestRobustness, FullOutputFileSystemStopsTheRunWithASummary) {
  std::string out = Work / "full";
  fs::create_directories(out);
  // m2 (~190 KiB of log, ~20 KiB of objects) fits in 256 KiB; m1 after it does not.
  if (::mount("tmpfs", out.c_str(), "tmpfs", 0, "size=256k") != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs here (" << std::strerror(errno) << ")";
  struct Unmount {
    std::string Path;
    ~Unmount() { ::umount2(Path.c_str(), MNT_DETACH); }
  } unmount{out};
  CommandResult r = run(harvest(out, "--num_workers=1 --modules_filter='m[12]'"));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_EQ(r.Err.find("LLVM ERROR"), std::string::npos) << r.Err;
  EXPECT_NE(r.Err.find("stopped: the output file system is unusable"), std::string::npos) << r.Err;
  auto j = journalByModule(out);
  ASSERT_EQ(j.size(), 2u) << r.Err;
  EXPECT_EQ(j["m2.o"]["status"], "ok") << j["m2.o"].dump();
  EXPECT_EQ(readObservations(out + "/logs/m2.o.log").size(), j["m2.o"]["decisions"].get<size_t>());
  EXPECT_EQ(j["m1.o"]["reason"], "write_failed") << j["m1.o"].dump();
  EXPECT_NE(j["m1.o"]["detail"].get<std::string>().find("No space left on device"), std::string::npos);
  nlohmann::json s = harvestSummary(out);
  ASSERT_TRUE(s.is_object()) << r.Err;
  EXPECT_NE(s.value("stopped", "").find("No space left on device"), std::string::npos) << s.dump();
  EXPECT_EQ(s["modules"]["ok"], 1);
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " " +
          quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/harvest_summary.schema.json") + " " +
          quote(out + "/summary.json"));
}

// A policy that never reads (cat /dev/zero answers "no" forever but never
// reads a byte) once blocked a worker in write() for good: SIGTERM did
// nothing, the killed compiler stayed a zombie.
TEST_F(HarvestRobustness, PolicyThatStopsReadingIsKilledAtTheDeadline) {
  std::string out = Work / "stuck";
  TempDir capture;
  // Largest first: m4 then m3, each with far more than a pipe's worth of
  // observations. (cat never reaches its second argument, which only names
  // the process for the check at the end.)
  BackgroundCommand harvest(harvestArgv(out, {"--num_workers=1", "--modules_filter=m[34]", "--compilation_timeout=5",
                                              "--policy=exec:cat /dev/zero " + out}),
                            capture / "err");
  pid_t pid = harvest.pid();
  // m4 is given up at ~5 s; check while m3 is in flight.
  EXPECT_TRUE(waitUntil([&] { return !journalByModule(out).empty() || harvest.exited(); }, GenerousDeadline,
                        "m4's journal record", std::chrono::milliseconds(50)));
  auto j = journalByModule(out);
  EXPECT_EQ(j.size(), 1u) << "m4 was never given up: " << readFile(capture / "err");
  if (j.count("m4.o")) {
    EXPECT_NE(j["m4.o"]["status"], "ok") << j["m4.o"].dump();
    EXPECT_TRUE(j["m4.o"]["reason"] == "policy_error" || j["m4.o"]["reason"] == "timeout") << j["m4.o"].dump();
    EXPECT_NE(j["m4.o"]["detail"].get<std::string>().find("stopped reading its input"), std::string::npos)
        << j["m4.o"].dump();
  }
  // A zombie seen twice, 300 ms apart, is one nobody reaps.
  std::set<std::string> zombies = zombieChildren(pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::set<std::string> still, again = zombieChildren(pid);
  std::set_intersection(zombies.begin(), zombies.end(), again.begin(), again.end(), std::inserter(still, still.end()));
  EXPECT_TRUE(still.empty()) << still.size() << " unreaped children";

  harvest.signal(SIGTERM);
  int status = 0;
  ASSERT_TRUE(harvest.wait(std::chrono::seconds(60), status))
      << "SIGTERM did not end the run: " << readFile(capture / "err");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130) << readFile(capture / "err");
  EXPECT_EQ(harvestSummary(out).value("interrupted", false), true) << readFile(capture / "err");
  EXPECT_EQ(journalByModule(out).count("m3.o"), 0u) << "the interrupted module is redone on resume, not recorded";
  EXPECT_TRUE(waitUntil([&] { return processesMentioning(out) == 0; }, ProcessesDieWithin,
                        "the compiler and policy processes to end"))
      << "a compiler or policy process survived";
}

// Ctrl-C signals the whole foreground process group. A child between vfork
// and exec once ran our handler on our memory, so the one signal looked
// like a second one and the run ended at once without a summary.
TEST_F(HarvestRobustness, SigintToTheProcessGroupAlwaysEndsWithASummary) {
  const int Probes = 20;
  // The signals are spread over one whole run, however fast this machine
  // runs it: timed uninterrupted first, the faster of two runs (a run slowed
  // by a busy machine would spread them past the end of the later ones).
  long long runMs = 0;
  for (int round = 0; round < 2; ++round) {
    auto before = std::chrono::steady_clock::now();
    BackgroundCommand whole(harvestArgv(Work / ("whole" + std::to_string(round)), {"--num_workers=4"}),
                            Work / "whole.err");
    int status = 0;
    ASSERT_TRUE(whole.wait(std::chrono::seconds(120), status)) << "an uninterrupted run did not end";
    long long ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - before).count();
    runMs = round == 0 ? ms : std::min(runMs, ms);
  }
  int finished = 0;
  for (int probe = 0; probe < Probes; ++probe) {
    std::string what = "probe " + std::to_string(probe);
    std::string out = Work / ("probe" + std::to_string(probe));
    BackgroundCommand harvest(harvestArgv(out, {"--num_workers=4"}), Work / ("err" + std::to_string(probe)));
    ASSERT_TRUE(waitUntil([&] { return catchesSigint(harvest.pid()) || harvest.exited(); }, GenerousDeadline,
                          what + ": the harvester to install its SIGINT handler", std::chrono::milliseconds(1)));
    // Spread over start-up (compiler probe, first spawns) and the compiles
    // (the first 75% of a run, as fast as the faster timed run: a sanitized
    // run on a busy machine varies by more than the last tenth): this sleep
    // picks the moment of the signal, it waits for nothing.
    std::this_thread::sleep_for(std::chrono::milliseconds(runMs * 75 * ((probe * 131) % 1000) / 100000));
    harvest.signal(SIGINT, /*group=*/true);
    int status = 0;
    ASSERT_TRUE(harvest.wait(std::chrono::seconds(60), status)) << what << ": SIGINT did not end the run";
    std::string err = readFile(Work / ("err" + std::to_string(probe)));
    ASSERT_TRUE(WIFEXITED(status)) << what << err;
    nlohmann::json s = harvestSummary(out);
    ASSERT_TRUE(s.is_object()) << what << ": no summary.json; stderr:\n" << err;
    if (WEXITSTATUS(status) == 0 && !s["interrupted"].get<bool>()) {
      ++finished; // the run ended before the signal
      continue;
    }
    EXPECT_EQ(WEXITSTATUS(status), 130) << what << err;
    EXPECT_TRUE(s["interrupted"].get<bool>()) << what;
    EXPECT_NE(err.find("Run the same command again to resume"), std::string::npos) << what << err;
    expectJournalMatchesLogs(out, what);
    EXPECT_EQ(s["modules"]["ok"].get<size_t>(), journalByModule(out).size()) << what;
    EXPECT_EQ(processesMentioning(out), 0u) << what << ": a compiler survived";
  }
  EXPECT_LT(finished, Probes / 4) << "most probes must interrupt a running harvest";
}

// --explicit_temps_dir on another file system: the finished log cannot be
// renamed into OUT/logs (EXDEV) and is copied there instead.
TEST_F(HarvestRobustness, TempsDirOnAnotherFileSystem) {
  std::string temps = "/dev/shm/mlgo-temps-" + std::to_string(::getpid());
  struct stat a {
  }, b{};
  if (::mkdir(temps.c_str(), 0700) != 0 || ::stat(temps.c_str(), &a) != 0 || ::stat(Work.path().c_str(), &b) != 0 ||
      a.st_dev == b.st_dev)
    GTEST_SKIP() << "no second file system (/dev/shm) to put the temps dir on";
  struct Remove {
    std::string Path;
    ~Remove() { fs::remove_all(Path); }
  } remove{temps};
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--modules_filter='m[12]' --explicit_temps_dir=" + quote(temps)));
  EXPECT_EQ(r.ExitCode, 0) << r.Err;
  auto j = journalByModule(out);
  for (const char *module : {"m1.o", "m2.o"}) {
    EXPECT_EQ(j[module]["status"], "ok") << j[module].dump();
    EXPECT_EQ(readObservations(out + "/logs/" + module + ".log").size(), j[module]["decisions"].get<size_t>());
    EXPECT_TRUE(exists(temps + "/" + module + "/native.o")) << "the work directory is kept";
    EXPECT_FALSE(exists(temps + "/" + module + "/module.log")) << "moved, not copied and left";
  }
  EXPECT_EQ(listTree(out + "/logs"), (std::set<std::string>{"m1.o.log", "m2.o.log"}));
}

} // namespace
