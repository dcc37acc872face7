// harvest-logs on a real single-node Slurm: munged, slurmctld and slurmd
// started for the test (scripts/slurm/local-cluster.sh, everything under a
// temporary directory), the array harvest and the dependent merge submitted
// with scripts/slurm/submit.sh, a task requeued mid-harvest, a merge with a
// shard missing. The cluster is torn down whatever happens: at the end of
// the suite, and by a watchdog if this process dies; no process of it may
// survive. Run alone with `ctest -L slurm`.
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace mlgo::test;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const std::string Scripts = std::string(MLGO_SOURCE_DIR) + "/scripts/slurm/";
constexpr int Modules = 48, Shards = 4;

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

// Live processes (not zombies) whose command line or environment names `needle`.
std::vector<std::string> processesMentioning(const std::string &needle) {
  std::vector<std::string> found;
  for (const auto &entry : fs::directory_iterator("/proc")) {
    std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || std::stoi(pid) == ::getpid())
      continue;
    std::string stat = readFile(entry.path().string() + "/stat");
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos || stat.substr(paren + 2, 1) == "Z")
      continue;
    std::string cmdline = readFile(entry.path().string() + "/cmdline");
    if (cmdline.find(needle) != std::string::npos)
      found.push_back(pid + ": " + cmdline);
  }
  return found;
}

class SlurmHarvest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0)
      return; // each test skips, saying why
    Fixture = new TempDir();
    ::chmod(Fixture->path().c_str(), 0755); // munged wants its socket's directories searchable
    Corpus = makeHarvestCorpus(*Fixture / "gen", Modules);
    // The one-machine run every merge must equal, on the same 2 cores.
    auto start = Clock::now();
    CommandResult one = run(tool("harvest-logs") + " -q --num_workers=2 --corpus=" + quote(Corpus) + " --output_dir=" +
                            quote(*Fixture / "one") + " --tfrecord=" + quote(*Fixture / "one.tfrecord"));
    OneMachineSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (one.ExitCode != 0) {
      StartError = "the one-machine harvest failed: " + one.Err;
      return;
    }
    SchedulerProcessesBefore = run(SchedulerProcesses).Out;
    Cluster = *Fixture / "cluster";
    CommandResult started = run(quote(Scripts + "local-cluster.sh") + " start " + quote(Cluster) + " --owner " +
                                std::to_string(::getpid()));
    if (started.ExitCode != 0) {
      StartError = "the cluster did not start: " + started.Err;
      return;
    }
    ::setenv("SLURM_CONF", trim(started.Out).c_str(), 1);
    Started = true;
  }

  static void TearDownTestSuite() {
    if (!Fixture)
      return;
    if (!Cluster.empty()) {
      CommandResult stopped = run(quote(Scripts + "local-cluster.sh") + " stop " + quote(Cluster));
      EXPECT_EQ(stopped.ExitCode, 0) << stopped.Err;
      // No daemon, job step or job of the cluster survives.
      for (const std::string &left : processesMentioning(Cluster))
        ADD_FAILURE() << "survived the teardown: " << left;
      std::string after = run(SchedulerProcesses).Out;
      EXPECT_EQ(after, SchedulerProcessesBefore) << "Slurm or munge processes before the suite:\n"
                                                 << SchedulerProcessesBefore << "and after it:\n"
                                                 << after;
    }
    std::printf("one-machine harvest of %d modules (2 workers): %.2f s\n", Modules, OneMachineSeconds);
    delete Fixture;
    Fixture = nullptr;
  }

  void SetUp() override {
    if (::geteuid() != 0)
      GTEST_SKIP() << "the Slurm tests start slurmd, which needs root";
    ASSERT_TRUE(Started) << StartError;
  }

  // Submits the array harvest and the merge; returns {array id, merge id}.
  std::pair<std::string, std::string> submit(const std::string &root, const std::string &harvestFlags) {
    CommandResult r =
        run("MLGO_BIN_DIR=" + quote(MLGO_BIN_DIR) + " " + quote(Scripts + "submit.sh") + " " + quote(Corpus) + " " +
            quote(root) + " " + std::to_string(Shards) + " -c 1 -- " + harvestFlags);
    EXPECT_EQ(r.ExitCode, 0) << r.Err << r.Out;
    std::smatch array, merge;
    std::regex_search(r.Out, array, std::regex("harvest array job: ([0-9]+)"));
    std::regex_search(r.Out, merge, std::regex("merge job: ([0-9]+)"));
    EXPECT_TRUE(!array.empty() && !merge.empty()) << r.Out;
    EXPECT_NE(r.Out.find("result: " + root + "/merged"), std::string::npos) << r.Out;
    return {array.empty() ? "" : array[1].str(), merge.empty() ? "" : merge[1].str()};
  }

  // Waits until none of `jobs` is pending or running, then returns each
  // task's final JobState ("COMPLETED", "FAILED", ...).
  std::vector<std::string> wait(const std::string &jobs, double timeoutSeconds = 150) {
    auto deadline = Clock::now() + std::chrono::duration<double>(timeoutSeconds);
    while (!trim(run("squeue -h -j " + jobs).Out).empty()) {
      if (Clock::now() > deadline) {
        ADD_FAILURE() << "jobs " << jobs << " still queued after " << timeoutSeconds << " s:\n"
                      << run("squeue -t all").Out;
        return {};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::vector<std::string> states;
    CommandResult shown = run("scontrol show job -o " + jobs.substr(0, jobs.find(',')) + "; scontrol show job -o " +
                              jobs.substr(jobs.find(',') + 1));
    std::regex state("JobState=([A-Z_]+)");
    for (std::sregex_iterator it(shown.Out.begin(), shown.Out.end(), state), end; it != end; ++it)
      states.push_back((*it)[1]);
    return states;
  }

  std::string jobOutput(const std::string &root) {
    std::string text;
    for (const std::string &file : listTree(root + "/slurm-logs"))
      text += "== " + file + "\n" + readFile(root + "/slurm-logs/" + file);
    return text;
  }

  // `optPath`: a wrapper of opt-22 the shards ran instead; the journal's
  // options header and the summary's mode_reason name it, and what its
  // compiles may read and execute differs (a script's interpreter, no
  // compile server); nothing else may differ.
  void expectEqualToOneMachine(const std::string &merged, const std::string &optPath = "") {
    auto asOne = [&](std::string text) {
      for (size_t at; !optPath.empty() && (at = text.find(optPath)) != std::string::npos;)
        text.replace(at, optPath.size(), "opt-22");
      return text;
    };
    auto withoutConfinementLists = [&](const std::string &text) {
      if (optPath.empty())
        return text;
      auto summary = nlohmann::ordered_json::parse(text);
      summary["confinement"].erase("readable");
      summary["confinement"].erase("executable");
      return summary.dump(2);
    };
    expectSameLogs(merged, *Fixture / "one");
    EXPECT_EQ(asOne(journalWithoutTimings(merged)), journalWithoutTimings(*Fixture / "one"));
    EXPECT_EQ(withoutConfinementLists(asOne(summaryWithoutTimings(merged))),
              withoutConfinementLists(summaryWithoutTimings(*Fixture / "one")));
  }

  // Every Slurm and munge process on the machine (pgrep matches at most 15
  // characters of a name, so "^(slurm|munge)").
  // Zombies are left out: daemons reparented to a PID 1 that does not reap
  // (as in this sandbox) stay <defunct>, dead, until the machine's init reaps them.
  static constexpr const char *SchedulerProcesses =
      "ps -eo pid=,stat=,comm= | awk '$2 !~ /^Z/ && $3 ~ /^(slurm|munge)/' | sort";

  static TempDir *Fixture;
  static std::string Corpus, Cluster, StartError, SchedulerProcessesBefore;
  static bool Started;
  static double OneMachineSeconds;
};
TempDir *SlurmHarvest::Fixture = nullptr;
std::string SlurmHarvest::Corpus, SlurmHarvest::Cluster, SlurmHarvest::StartError,
    SlurmHarvest::SchedulerProcessesBefore;
bool SlurmHarvest::Started = false;
double SlurmHarvest::OneMachineSeconds = 0;

TEST_F(SlurmHarvest, ArrayHarvestAndDependentMergeEqualTheOneMachineRun) {
  std::string root = *Fixture / "run";
  auto start = Clock::now();
  auto [array, merge] = submit(root, "--progress_interval=0");
  ASSERT_FALSE(array.empty() || merge.empty());
  auto states = wait(array + "," + merge);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("4-task Slurm array harvest + merge of %d modules: %.2f s (one machine: %.2f s)\n", Modules, seconds,
              OneMachineSeconds);
  ASSERT_EQ(states, std::vector<std::string>(Shards + 1, "COMPLETED")) << jobOutput(root);
  for (int i = 0; i < Shards; ++i)
    EXPECT_EQ(nlohmann::json::parse(readFile(root + "/shard-" + std::to_string(i) + "/summary.json"))["shard"],
              std::to_string(i) + "/" + std::to_string(Shards));
  expectEqualToOneMachine(root + "/merged");
  std::string tfrecord = readFile(*Fixture / "one.tfrecord");
  EXPECT_GT(tfrecord.size(), 10000u);
  EXPECT_EQ(readFile(root + "/trace.tfrecord"), tfrecord);
  EXPECT_NE(jobOutput(root).find("1 workers"), std::string::npos) << jobOutput(root);
}

TEST_F(SlurmHarvest, ARequeuedTaskResumesAndTheMergeStillEqualsTheOneMachineRun) {
  // opt-22 behind a wrapper that counts the compiles of each module, and
  // takes 0.2 s longer so that a task is easy to catch mid-harvest.
  std::string compiles = *Fixture / "compiles.txt";
  std::string opt =
      writeScript(*Fixture / "counting-opt", "#!/bin/bash\nfor a in \"$@\"; do case $a in " + quote(Corpus) +
                                                 "/*.bc) echo \"$a\" >>" + quote(compiles) +
                                                 ";; esac; done\nsleep 0.2\nexec opt-22 \"$@\"\n");
  std::string root = *Fixture / "requeue";
  // The wrapper counts outside its work directory: allowed explicitly.
  auto [array, merge] = submit(root, "--progress_interval=0 --opt_path=" + quote(opt) +
                                         " --compiler_writable_dir=" + quote(Fixture->path()));
  ASSERT_FALSE(array.empty() || merge.empty());
  std::string task = array + "_1", journal = root + "/shard-1/harvest.jsonl";
  const size_t planned = Modules / Shards;

  // Catch task 1 running with some but not all of its modules done.
  size_t doneAtRequeue = 0;
  for (auto deadline = Clock::now() + std::chrono::seconds(120); Clock::now() < deadline;) {
    std::string text = readFile(journal);
    size_t lines = 0; // records, not the options header
    for (size_t at = 0; (at = text.find("{\"module\"", at)) != std::string::npos; ++at)
      ++lines;
    if (lines >= 1 && lines < planned && trim(run("squeue -h -j " + task + " -o %T").Out) == "RUNNING") {
      doneAtRequeue = lines;
      break;
    }
    ASSERT_LT(lines, planned) << "task 1 finished before it could be requeued";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(doneAtRequeue, 0u) << "task 1 never ran\n" << run("squeue -t all").Out;
  CommandResult requeue = run("scontrol requeue " + task);
  ASSERT_EQ(requeue.ExitCode, 0) << requeue.Err;
  // A requeued task waits ~2 minutes (BeginTime); start it again now.
  bool restarted = false;
  for (auto deadline = Clock::now() + std::chrono::seconds(60); !restarted && Clock::now() < deadline;) {
    std::string state = trim(run("squeue -h -j " + task + " -o %T").Out);
    if (state == "PENDING")
      run("scontrol update JobId=" + task + " StartTime=now");
    restarted = state == "RUNNING" || state.empty();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  ASSERT_TRUE(restarted) << run("squeue -t all").Out;
  auto states = wait(array + "," + merge);
  ASSERT_EQ(states, std::vector<std::string>(Shards + 1, "COMPLETED")) << jobOutput(root);
  EXPECT_NE(run("scontrol show job " + task).Out.find("Restarts=1"), std::string::npos);
  EXPECT_NE(jobOutput(root).find("restart 1"), std::string::npos) << jobOutput(root);
  EXPECT_NE(jobOutput(root).find("resuming: "), std::string::npos) << jobOutput(root);

  expectEqualToOneMachine(root + "/merged", opt);
  EXPECT_EQ(readFile(root + "/trace.tfrecord"), readFile(*Fixture / "one.tfrecord"));

  // Every module compiled once, except what the requeue forced in task 1
  // (one worker), which was killed mid-harvest.
  std::map<std::string, int> count;
  std::istringstream lines(readFile(compiles));
  for (std::string line; std::getline(lines, line);)
    ++count[fs::path(line).filename().string()];
  EXPECT_EQ(count.size(), static_cast<size_t>(Modules));
  std::set<std::string> shard1;
  std::istringstream shardJournal(readFile(journal));
  for (std::string line; std::getline(shardJournal, line);)
    if (auto j = nlohmann::json::parse(line); !j.contains("options")) // skip the header
      shard1.insert(j["module"].get<std::string>() + ".bc");
  int extra = 0;
  for (auto &[module, n] : count) {
    EXPECT_LE(n, 2) << module;
    if (n > 1) {
      extra += n - 1;
      EXPECT_TRUE(shard1.count(module)) << module << " was compiled twice but is not in the requeued shard";
    }
  }
  // Slurm signals every process of the task, not atomically: the compiler
  // can die first, its module is journaled as failed (redone on resume) and
  // the harvester may start one more module before its own SIGTERM lands.
  // So per worker: the module in flight plus at most one started in that race.
  EXPECT_LE(extra, 2) << "modules compiled again beyond what the requeue forced";
  std::printf("requeued task 1 after %zu of %zu modules; %d module(s) compiled again\n", doneAtRequeue, planned, extra);
}

TEST_F(SlurmHarvest, AMergeWithAShardMissingNamesIt) {
  std::string root = *Fixture / "run", partial = *Fixture / "partial";
  ASSERT_TRUE(exists(root + "/shard-3/summary.json")) << "needs the array harvest's shards";
  fs::create_directories(partial);
  for (int i : {0, 1, 3})
    fs::copy(root + "/shard-" + std::to_string(i), partial + "/shard-" + std::to_string(i),
             fs::copy_options::recursive);
  CommandResult submitted = run("MLGO_MERGE_HARVEST=" + quote(tool("merge-harvest")) + " sbatch --parsable -o " +
                                quote(partial + "/merge.out") + " " + quote(Scripts + "merge.sbatch") + " " +
                                quote(Corpus) + " " + quote(partial) + " " + std::to_string(Shards));
  ASSERT_EQ(submitted.ExitCode, 0) << submitted.Err;
  std::string job = trim(submitted.Out);
  auto states = wait(job + "," + job);
  ASSERT_FALSE(states.empty());
  EXPECT_EQ(states[0], "FAILED");
  std::string output = readFile(partial + "/merge.out");
  EXPECT_NE(output.find("shard 2/4 (" + partial + "/shard-2): the directory does not exist; 12 of 12 modules absent"),
            std::string::npos)
      << output;
  std::istringstream shard2(readFile(root + "/shard-2/harvest.jsonl"));
  for (std::string line; std::getline(shard2, line);) {
    if (line.find("\"options\"") == 0 || line.rfind("{\"options\"", 0) == 0)
      continue; // the header
    std::string module = nlohmann::json::parse(line)["module"];
    EXPECT_NE(output.find(module), std::string::npos) << module << " is not named";
  }
  EXPECT_FALSE(exists(partial + "/merged"));
  EXPECT_FALSE(exists(partial + "/trace.tfrecord"));
}

// docs/cluster.md's recipe for failed tasks: resubmit just their ids with
// the same N. Slurm gives such a list COUNT=2, MIN=1, MAX=3, STEP=1; task 1
// once ran as shard 0/2 into shard-0 (half the corpus) and task 3 failed.
TEST_F(SlurmHarvest, RerunningTwoTasksByIdRebuildsExactlyTheirShards) {
  std::string run1 = *Fixture / "run", root = *Fixture / "rerun";
  ASSERT_TRUE(exists(run1 + "/shard-3/summary.json")) << "needs the array harvest's shards";
  fs::create_directories(root + "/slurm-logs");
  for (int i = 0; i < Shards; ++i)
    fs::copy(run1 + "/shard-" + std::to_string(i), root + "/shard-" + std::to_string(i), fs::copy_options::recursive);
  // Task 1's output is gone; task 3's is broken (a log lost, its journal cut).
  fs::remove_all(root + "/shard-1");
  std::vector<nlohmann::json> shard3 = harvestJournal(root + "/shard-3");
  ASSERT_EQ(shard3.size(), static_cast<size_t>(Modules / Shards));
  fs::remove(root + "/shard-3/logs/" + shard3[0]["module"].get<std::string>() + ".log");
  std::string journal3 = readFile(root + "/shard-3/harvest.jsonl");
  writeFile(root + "/shard-3/harvest.jsonl", journal3.substr(0, journal3.size() / 2)); // torn mid-line
  std::map<int, std::string> untouchedJournals;
  std::map<int, std::set<std::string>> untouchedLogs;
  for (int i : {0, 2}) {
    untouchedJournals[i] = readFile(root + "/shard-" + std::to_string(i) + "/harvest.jsonl");
    untouchedLogs[i] = listTree(root + "/shard-" + std::to_string(i) + "/logs");
  }

  CommandResult r = run("MLGO_HARVEST_LOGS=" + quote(tool("harvest-logs")) + " sbatch --parsable --array=1,3 -c 1 " +
                        "--chdir=" + quote(root) + " -o " + quote(root + "/slurm-logs/harvest-%A_%a.out") + " " +
                        quote(Scripts + "harvest.sbatch") + " " + quote(Corpus) + " " + quote(root) + " " +
                        std::to_string(Shards) + " --progress_interval=0");
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  std::string array = trim(r.Out);
  array = array.substr(0, array.find(';'));
  auto states = wait(array + "," + array);
  ASSERT_EQ(states.size(), 4u) << jobOutput(root); // each task shown twice
  for (const std::string &state : states)
    EXPECT_EQ(state, "COMPLETED") << jobOutput(root);
  for (int i : {1, 3})
    EXPECT_EQ(harvestSummary(root + "/shard-" + std::to_string(i))["shard"],
              std::to_string(i) + "/" + std::to_string(Shards))
        << jobOutput(root);
  // Nothing else was touched: no other shard's directory was written (task 1
  // once harvested half the corpus into shard-0).
  for (int i : {0, 2}) {
    EXPECT_EQ(readFile(root + "/shard-" + std::to_string(i) + "/harvest.jsonl"), untouchedJournals[i]) << i;
    EXPECT_EQ(listTree(root + "/shard-" + std::to_string(i) + "/logs"), untouchedLogs[i]) << i;
  }
  CommandResult merged =
      run(tool("merge-harvest") + " -q --corpus=" + quote(Corpus) + " --output_dir=" + quote(root + "/merged") +
          " --tfrecord=" + quote(root + "/trace.tfrecord") + " " + quote(root + "/shard-0") + " " +
          quote(root + "/shard-1") + " " + quote(root + "/shard-2") + " " + quote(root + "/shard-3"));
  ASSERT_EQ(merged.ExitCode, 0) << merged.Err;
  expectEqualToOneMachine(root + "/merged");
  EXPECT_EQ(readFile(root + "/trace.tfrecord"), readFile(*Fixture / "one.tfrecord"));

  // A task given another N than its directory's shard is refused, clearly.
  r = run("MLGO_HARVEST_LOGS=" + quote(tool("harvest-logs")) + " sbatch --parsable --array=1 -c 1 --chdir=" +
          quote(root) + " -o " + quote(root + "/slurm-logs/wrong-n.out") + " " + quote(Scripts + "harvest.sbatch") +
          " " + quote(Corpus) + " " + quote(root) + " 8 --progress_interval=0");
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  std::string wrong = trim(r.Out);
  wrong = wrong.substr(0, wrong.find(';'));
  states = wait(wrong + "," + wrong);
  ASSERT_FALSE(states.empty());
  EXPECT_EQ(states[0], "FAILED");
  std::string output = readFile(root + "/slurm-logs/wrong-n.out");
  EXPECT_NE(output.find("was written by shard \"1/4\", and this run is shard \"1/8\""), std::string::npos) << output;
}

TEST_F(SlurmHarvest, ShardAutoOutsideAnySchedulerIsAClearError) {
  CommandResult r = run("env -u SLURM_ARRAY_TASK_ID -u SLURM_JOB_ID -u JOB_COMPLETION_INDEX " + tool("harvest-logs") +
                        " --corpus=" + quote(Corpus) + " --output_dir=" + quote(*Fixture / "auto") + " --shard=auto");
  EXPECT_EQ(r.ExitCode, 2);
  EXPECT_NE(r.Err.find("--shard=auto: no scheduler shard variables are set"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(*Fixture / "auto"));
}

} // namespace
