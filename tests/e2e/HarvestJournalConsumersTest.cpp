// The harvest directory as data from someone else, read by both consumers
// (harvest-logs' resume and merge-harvest): hostile journals and summaries
// are clear errors in both, stale logs never survive or travel, auto mode's
// probe does not lock a shard out of its own journal, and an interrupted or
// killed merge leaves nothing behind and syncs what it publishes.
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace mlgo::test;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const std::string Harvest = tool("harvest-logs");
const std::string Merge = tool("merge-harvest");

class HarvestJournalConsumers : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    Corpus = makeHarvestCorpus(Fixture->path(), 12);
    // Two shards and the one-machine run, harvested once; tests work on copies.
    for (int i = 0; i < 2; ++i)
      mustRun(harvest(*Fixture / ("shards/shard-" + std::to_string(i)), "--shard=" + std::to_string(i) + "/2"));
    mustRun(harvest(*Fixture / "one", ""));
  }
  static void TearDownTestSuite() { delete Fixture; }

  static std::string harvest(const std::string &out, const std::string &flags) {
    return Harvest + " -q --num_workers=2 --corpus=" + quote(Corpus) + " --output_dir=" + quote(out) + " " + flags;
  }
  static std::string merge(const std::string &out, const std::vector<std::string> &shards,
                           const std::string &flags = "") {
    std::string command = Merge + " --corpus=" + quote(Corpus) + " --output_dir=" + quote(out) + " " + flags;
    for (const std::string &shard : shards)
      command += " " + quote(shard);
    return command;
  }
  // Fresh copies of the two shards.
  std::vector<std::string> copyShards() {
    std::vector<std::string> dirs;
    for (int i = 0; i < 2; ++i) {
      std::string to = Work / ("shard-" + std::to_string(i));
      fs::copy(*Fixture / ("shards/shard-" + std::to_string(i)), to, fs::copy_options::recursive);
      dirs.push_back(to);
    }
    return dirs;
  }
  // Nothing of a merge into Work/merged exists, not even its staging.
  void expectNoMergeOutput() {
    EXPECT_FALSE(exists(Work / "merged"));
    for (const std::string &entry : listTree(Work.path()))
      EXPECT_EQ(entry.find("merge-tmp"), std::string::npos) << entry;
  }

  static TempDir *Fixture;
  static std::string Corpus;
  TempDir Work;
};
TempDir *HarvestJournalConsumers::Fixture = nullptr;
std::string HarvestJournalConsumers::Corpus;

// The journal's record lines (header first), to be edited and written back.
std::vector<std::string> lines(const std::string &path) {
  std::vector<std::string> out;
  std::istringstream in(readFile(path));
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}
void writeLines(const std::string &path, const std::vector<std::string> &text) {
  std::string all;
  for (const std::string &line : text)
    all += line + "\n";
  writeFile(path, all);
}

// Every field of a record, given a value of the wrong type, was a
// nlohmann::json::type_error (exit 134) in merge-harvest and resume, or was
// silently skipped by the merge. Now both say "FILE line N: field X is not
// ..." and exit 1, and the merge writes nothing.
TEST_F(HarvestJournalConsumers, WrongTypedJournalFieldsAreTheSameClearErrorInBothTools) {
  auto shards = copyShards();
  std::string journal = shards[1] + "/harvest.jsonl";
  std::vector<std::string> original = lines(journal);
  ASSERT_GE(original.size(), 3u);
  const std::vector<std::pair<std::string, nlohmann::json>> hostile = {
      {"module", 7},          {"status", true},    {"reason", 1},
      {"detail", nullptr},    {"exit_status", 0},  {"stderr_tail", {1, 2}},
      {"seconds", "1.5"},     {"decisions", "5"},  {"decisions", -3},
      {"decisions", 2.5},     {"streams", false},  {"log_written", 1},
      {"native_size", "big"}, {"native_size", -1}, {"default_size", nlohmann::json::object()},
      {"reward", "0.5"},
  };
  for (const auto &[field, value] : hostile) {
    SCOPED_TRACE(field + " = " + value.dump());
    std::vector<std::string> edited = original;
    nlohmann::ordered_json record = nlohmann::ordered_json::parse(edited[2]);
    record[field] = value;
    edited[2] = record.dump();
    writeLines(journal, edited);
    std::string expected = journal + " line 3: field '" + field + "' is not a";
    CommandResult merged = run(merge(Work / "merged", shards));
    EXPECT_EQ(merged.ExitCode, 1) << merged.Err;
    EXPECT_NE(merged.Err.find(expected), std::string::npos) << merged.Err;
    expectNoMergeOutput();
    CommandResult resumed = run(harvest(shards[1], "--shard=1/2"));
    EXPECT_EQ(resumed.ExitCode, 1) << resumed.Err;
    EXPECT_NE(resumed.Err.find(expected), std::string::npos) << resumed.Err;
  }
  // A missing field, an unknown one, an unknown status, a failed module
  // that claims a log, a module name leaving the directory: refused alike.
  const std::vector<std::pair<std::function<void(nlohmann::ordered_json &)>, std::string>> broken = {
      {[](auto &r) { r.erase("log_written"); }, "field 'log_written' is missing"},
      {[](auto &r) { r["extra"] = 1; }, "field 'extra' is not a field of this file"},
      {[](auto &r) { r["status"] = "done"; }, "field 'status' is \"done\", not ok, failed or timeout"},
      {[](auto &r) { r["status"] = "failed"; }, "field 'log_written' is true for a module whose status is failed"},
      {[](auto &r) { r["module"] = "../../etc/passwd"; }, "field 'module': "},
  };
  for (const auto &[edit, message] : broken) {
    SCOPED_TRACE(message);
    std::vector<std::string> edited = original;
    // A record with a log, so that "failed" contradicts log_written.
    size_t withLog = 1;
    while (withLog < edited.size() && !nlohmann::json::parse(edited[withLog])["log_written"].get<bool>())
      ++withLog;
    ASSERT_LT(withLog, edited.size());
    nlohmann::ordered_json record = nlohmann::ordered_json::parse(edited[withLog]);
    edit(record);
    edited[withLog] = record.dump();
    writeLines(journal, edited);
    std::string expected = journal + " line " + std::to_string(withLog + 1) + ": " + message;
    CommandResult merged = run(merge(Work / "merged", shards));
    EXPECT_EQ(merged.ExitCode, 1) << merged.Err;
    EXPECT_NE(merged.Err.find(expected), std::string::npos) << merged.Err;
    expectNoMergeOutput();
    CommandResult resumed = run(harvest(shards[1], "--shard=1/2"));
    EXPECT_EQ(resumed.ExitCode, 1) << resumed.Err;
    EXPECT_NE(resumed.Err.find(expected), std::string::npos) << resumed.Err;
  }
  EXPECT_FALSE(exists("/etc/passwd.log"));
}

// A line cut short before the last one was skipped by the merge and an error
// for resume. Now both refuse it; a torn last line (a killed run) both skip:
// resume redoes the module, the merge reports it unfinished.
TEST_F(HarvestJournalConsumers, TruncatedLinesAreJudgedAlikeByBothTools) {
  auto shards = copyShards();
  std::string journal = shards[0] + "/harvest.jsonl";
  std::vector<std::string> original = lines(journal);
  std::vector<std::string> cut = original;
  cut[2] = cut[2].substr(0, cut[2].size() / 2);
  writeLines(journal, cut);
  std::string expected = journal + ", line 3: not a JSON object";
  CommandResult merged = run(merge(Work / "merged", shards));
  EXPECT_EQ(merged.ExitCode, 1);
  EXPECT_NE(merged.Err.find(expected), std::string::npos) << merged.Err;
  expectNoMergeOutput();
  CommandResult resumed = run(harvest(shards[0], "--shard=0/2"));
  EXPECT_EQ(resumed.ExitCode, 1);
  EXPECT_NE(resumed.Err.find(expected), std::string::npos) << resumed.Err;

  std::string torn = readFile(*Fixture / "shards/shard-0/harvest.jsonl");
  torn.resize(torn.size() - 10); // the last record, cut without its '\n'
  writeFile(journal, torn);
  std::string lastModule = nlohmann::json::parse(original.back())["module"];
  merged = run(merge(Work / "merged", shards));
  EXPECT_EQ(merged.ExitCode, 1);
  EXPECT_NE(merged.Err.find("1 of 6 modules absent: " + lastModule), std::string::npos) << merged.Err;
  resumed = run(harvest(shards[0], "--shard=0/2"));
  EXPECT_EQ(resumed.ExitCode, 0) << resumed.Err;
  ASSERT_EQ(run(merge(Work / "merged", shards)).ExitCode, 0);
  expectSameLogs(Work / "merged", *Fixture / "one");
}

TEST_F(HarvestJournalConsumers, WrongTypedSummaryFieldsAreClearErrors) {
  auto shards = copyShards();
  std::string path = shards[1] + "/summary.json";
  nlohmann::ordered_json original = nlohmann::ordered_json::parse(readFile(path));
  const std::vector<std::pair<std::string, nlohmann::json>> hostile = {
      {"shard", 1},        {"problem", {}},
      {"compiler", false}, {"mode", 3},
      {"policy", 0.5},     {"mode_reason", {1}},
      {"seconds", "fast"}, {"harvester_cpu_seconds", -1},
      {"merge", "yes"},    {"harvester_peak_rss_kb", "1 MB"},
  };
  for (const auto &[field, value] : hostile) {
    SCOPED_TRACE(field);
    nlohmann::ordered_json edited = original;
    edited[field] = value;
    writeFile(path, edited.dump(2));
    CommandResult merged = run(merge(Work / "merged", shards));
    EXPECT_EQ(merged.ExitCode, 1) << merged.Err;
    EXPECT_NE(merged.Err.find(path + ": field '" + field + "' is not a"), std::string::npos) << merged.Err;
    expectNoMergeOutput();
  }
  for (const std::string &text : {std::string("[1, 2]"), std::string("{\"shard\": "), std::string("")}) {
    writeFile(path, text);
    CommandResult merged = run(merge(Work / "merged", shards));
    EXPECT_EQ(merged.ExitCode, 1) << text;
    EXPECT_NE(merged.Err.find(path + ": not"), std::string::npos) << merged.Err;
    expectNoMergeOutput();
  }
}

// A module redone (--force) that then times out kept its earlier log while
// the journal said timeout, and the merge copied it. The journal describes
// every log: the log goes, in both tools.
TEST_F(HarvestJournalConsumers, ARedoneModuleThatFailsLosesItsLogInBothTools) {
  auto shards = copyShards();
  std::string module;
  for (const nlohmann::json &record : harvestJournal(shards[0]))
    if (record["log_written"] == true) {
      module = record["module"];
      break;
    }
  ASSERT_FALSE(module.empty());
  std::string log = shards[0] + "/logs/" + module + ".log", saved = readFile(log);
  ASSERT_FALSE(saved.empty());
  CommandResult redone =
      run(harvest(shards[0], "--shard=0/2 --force --modules_filter=" + module + "$ --compilation_timeout=0.001"));
  ASSERT_EQ(redone.ExitCode, 0) << redone.Err;
  nlohmann::json record = journalByModule(shards[0])[module];
  EXPECT_EQ(record["status"], "timeout") << record.dump();
  EXPECT_EQ(record["log_written"], false) << record.dump();
  EXPECT_FALSE(exists(log)) << "the journal says " << record["status"] << " but the earlier log is still there";

  // An older version left such a log: the merge does not take it, and says so.
  writeFile(log, saved);
  CommandResult merged = run(merge(Work / "merged", shards));
  ASSERT_EQ(merged.ExitCode, 0) << merged.Err;
  EXPECT_FALSE(exists(Work / "merged/logs/" + module + ".log"));
  EXPECT_NE(merged.Err.find("not merging 1 log(s) that its journal does not describe as written"), std::string::npos)
      << merged.Err;
  EXPECT_NE(merged.Err.find(module), std::string::npos) << merged.Err;
  // harvest-logs removes it when it starts, and redoes the module.
  CommandResult resumed = run(Harvest + " --num_workers=2 --progress_interval=0 --corpus=" + quote(Corpus) +
                              " --output_dir=" + quote(shards[0]) + " --shard=0/2 --modules_filter=nothing$");
  ASSERT_EQ(resumed.ExitCode, 0) << resumed.Err;
  EXPECT_NE(resumed.Err.find(module + ": removing logs/" + module + ".log"), std::string::npos) << resumed.Err;
  EXPECT_FALSE(exists(log));
  mustRun(harvest(shards[0], "--shard=0/2"));
  EXPECT_EQ(readFile(log), saved);
  EXPECT_EQ(journalByModule(shards[0])[module]["status"], "ok");
}

// The journal header recorded auto's choice (mode "plugin"); one failed
// probe (the plugin not loadable on this node) ran interactive mode, which
// writes the same logs, and the shard refused its own journal.
TEST_F(HarvestJournalConsumers, AJournalWrittenUnderAutoResumesAfterTheProbeDecidesOtherwise) {
  std::string out = Work / "auto";
  CommandResult first = run(Harvest + " --num_workers=2 --progress_interval=0 --corpus=" + quote(Corpus) +
                            " --output_dir=" + quote(out) + " --modules_filter=m1");
  ASSERT_EQ(first.ExitCode, 0) << first.Err;
  ASSERT_EQ(harvestSummary(out)["mode"], "plugin") << first.Err;
  size_t done = harvestJournal(out).size();
  ASSERT_GT(done, 0u);
  CommandResult second = run(Harvest + " --num_workers=2 --progress_interval=0 --corpus=" + quote(Corpus) +
                             " --output_dir=" + quote(out) + " --plugin_path=" + quote(Work / "no-plugin.so"));
  ASSERT_EQ(second.ExitCode, 0) << second.Err;
  EXPECT_EQ(harvestSummary(out)["mode"], "interactive");
  EXPECT_NE(second.Err.find("resuming: " + std::to_string(done) + " of 12 modules are already done"), std::string::npos)
      << second.Err;
  EXPECT_EQ(harvestSummary(out)["modules"]["skipped_done"], done);
  expectSameLogs(out, *Fixture / "one");
  // The other way round too.
  mustRun(harvest(out, "--force --modules_filter=m1"));
  EXPECT_EQ(harvestSummary(out)["mode"], "plugin");
  expectSameLogs(out, *Fixture / "one");
}

// A merge killed before its rename (SIGKILL, a second Ctrl-C, power loss)
// left OUT.merge-tmp.<pid>, a copy of every log, forever.
TEST_F(HarvestJournalConsumers, StaleStagingOfADeadMergeIsRemovedByTheNext) {
  auto shards = copyShards();
  writeFile(Work / "merged.merge-tmp.999999/logs/m1.log", "an earlier merge's copy");
  writeFile(Work / "merged.merge-old.999998/summary.json", "{}");
  // A link so named is removed itself, never the directory it names.
  writeFile(Work / "outside/precious.log", "not the merge's\n");
  ASSERT_EQ(::symlink((Work / "outside").c_str(), (Work / "merged.merge-tmp.999997").c_str()), 0);
  CommandResult r = run(merge(Work / "merged", shards));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  struct stat st;
  EXPECT_NE(::lstat((Work / "merged.merge-tmp.999997").c_str(), &st), 0);
  EXPECT_EQ(readFile(Work / "outside/precious.log"), "not the merge's\n");
  EXPECT_NE(r.Err.find("merged.merge-tmp.999999, left by an earlier merge-harvest that did not finish"),
            std::string::npos)
      << r.Err;
  EXPECT_FALSE(exists(Work / "merged.merge-tmp.999999"));
  EXPECT_FALSE(exists(Work / "merged.merge-old.999998"));
  expectSameLogs(Work / "merged", *Fixture / "one");
}

// Runs `command` (which writes its pid to `pidFile` and execs the merge)
// in a thread; returns its result. The command carries its own deadline.
struct Background {
  std::thread Thread;
  CommandResult Result;
  explicit Background(const std::string &command) : Thread([this, command] { Result = run(command); }) {}
  CommandResult join() {
    Thread.join();
    return Result;
  }
};

// SIGTERM mid-merge killed it with OUT.merge-tmp.<pid> (every log copied so
// far) left behind. Each shard log's open is slowed (strace -P ... inject)
// so that the signal lands while logs are being copied. Logs are opened
// below their shard (openat2 from the shard's descriptor, BeneathPath.h),
// which -P matches by the shard directory.
TEST_F(HarvestJournalConsumers, SigtermMidMergeLeavesNothingAndARerunSucceeds) {
  auto shards = copyShards();
  std::string strace = "strace -f -o " + quote(Work / "strace.txt") +
                       " -e trace=openat,openat2 -e inject=openat,openat2:delay_enter=400000";
  size_t logs = 0;
  for (const std::string &shard : shards)
    strace += " -P " + quote(shard);
  for (const std::string &shard : shards)
    for (const std::string &log : listTree(shard + "/logs")) {
      strace += " -P " + quote(shard + "/logs/" + log);
      ++logs;
    }
  ASSERT_GE(logs, 6u);
  std::string pidFile = Work / "merge.pid";
  Background merging(NoLeakCheckUnderPtrace + "timeout 60 " + strace + " sh -c " +
                     quote("echo $$ > " + quote(pidFile) + "; exec " + merge(Work / "merged", shards)));
  // Wait (60 s at most) until the merge is copying: its staging holds a log.
  std::string staging;
  auto deadline = Clock::now() + std::chrono::seconds(60);
  while (staging.empty() && Clock::now() < deadline) {
    for (const std::string &entry : listTree(Work.path()))
      if (entry.find("merged.merge-tmp.") == 0 && entry.find("/logs/m") != std::string::npos)
        staging = entry;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string pid = readFile(pidFile);
  while (!pid.empty() && (pid.back() == '\n'))
    pid.pop_back();
  if (!pid.empty() && !staging.empty())
    ::kill(std::stoi(pid), SIGTERM);
  CommandResult r = merging.join();
  ASSERT_FALSE(staging.empty()) << "the merge never got to copying logs: " << r.Err;
  EXPECT_EQ(r.ExitCode, 130) << r.Err;
  EXPECT_NE(r.Err.find("interrupted: nothing was written"), std::string::npos) << r.Err;
  expectNoMergeOutput();
  CommandResult again = run(merge(Work / "merged", shards));
  ASSERT_EQ(again.ExitCode, 0) << again.Err;
  expectSameLogs(Work / "merged", *Fixture / "one");
}

// The durability policy, observed: under strace, every copied log is
// fdatasync'ed, and every staging directory fsync'ed, before the rename that
// publishes the merge; the parent is fsync'ed after it.
TEST_F(HarvestJournalConsumers, EveryCopiedLogIsSyncedBeforeTheFinalRename) {
  auto shards = copyShards();
  std::string trace = Work / "strace.txt";
  CommandResult r = run(NoLeakCheckUnderPtrace + "timeout 120 strace -f -y -o " + quote(trace) +
                        " -e trace=fsync,fdatasync,syncfs,rename,renameat,renameat2 " + merge(Work / "merged", shards));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  std::vector<std::string> calls = lines(trace);
  std::string out = Work / "merged";
  // The final rename: OUT.merge-tmp.<pid> to OUT.
  std::regex finalRename("rename(at2?)?\\(.*\"" + out + "\\.merge-tmp\\.[0-9]+\".*\"" + out + "\"");
  size_t renameAt = calls.size();
  std::string staging;
  for (size_t i = 0; i < calls.size(); ++i)
    if (std::regex_search(calls[i], finalRename)) {
      renameAt = i;
      std::smatch m;
      std::regex_search(calls[i], m, std::regex("\"(" + out + "\\.merge-tmp\\.[0-9]+)\""));
      staging = m[1];
    }
  ASSERT_LT(renameAt, calls.size()) << readFile(trace);
  auto syncedBefore = [&](const std::string &path, size_t end) {
    for (size_t i = 0; i < end; ++i)
      if ((calls[i].find("fdatasync(") != std::string::npos || calls[i].find("fsync(") != std::string::npos) &&
          calls[i].find("<" + path + ">") != std::string::npos)
        return true;
    return false;
  };
  std::set<std::string> logs = listTree(out + "/logs");
  ASSERT_GE(logs.size(), 6u);
  for (const std::string &log : logs)
    EXPECT_TRUE(syncedBefore(staging + "/logs/" + log, renameAt)) << log << " was not synced before the rename";
  // The journal and summary: their temporaries (<name>.tmp.*) are synced before their own renames.
  for (const std::string &file : {"/harvest.jsonl", "/summary.json"}) {
    bool synced = false;
    for (size_t i = 0; i < renameAt; ++i)
      synced = synced || (calls[i].find("fdatasync(") != std::string::npos &&
                          calls[i].find("<" + staging + file + ".tmp.") != std::string::npos);
    EXPECT_TRUE(synced) << file;
  }
  EXPECT_TRUE(syncedBefore(staging + "/logs", renameAt)) << "the logs directory";
  EXPECT_TRUE(syncedBefore(staging, renameAt)) << "the staging directory";
  bool parentAfter = false;
  for (size_t i = renameAt + 1; i < calls.size(); ++i)
    parentAfter = parentAfter || (calls[i].find("fsync(") != std::string::npos &&
                                  calls[i].find("<" + Work.path() + ">") != std::string::npos);
  EXPECT_TRUE(parentAfter) << "the parent directory is not synced after the rename";
}

} // namespace
