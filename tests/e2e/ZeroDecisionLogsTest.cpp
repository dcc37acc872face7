// Issue 10, part 1: every log a harvest writes is readable by a reader built
// like LLVM's log_reader.py (every context line followed by an observation),
// also when modules and functions have no decision: real opt-22/llc-22 on a
// corpus with such modules, checked by an independent Python reader.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string TrainingLog = tool("training-log");
const std::string Reader =
    "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/independent_log_reader.py") + " ";

const std::string Trivial = "int twice(int x) { return 2 * x; }\nint add(int a, int b) { return a + b; }\n";

class ZeroDecisionLogs : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    std::map<std::string, std::string> sources = {
        // inliner: call sites; none; no function bodies at all
        {"calls", "static int leaf(int x) { return x * 7; }\nint top(int x) { return leaf(x) + leaf(x + 1); }\n"},
        {"nocalls", Trivial},
        {"nobody", "int only_declared(int);\nint global = 3;\n"},
        // regalloc: functions with evictions next to functions without
        {"mixed", pressureFunction("hot", 40) + Trivial},
    };
    makeEmbeddedBitcodeCorpus(Fixture->path(), {sources.begin(), sources.end()}, "-O2", ObjectListing::Directory);
  }
  static void TearDownTestSuite() { delete Fixture; }

  std::string harvest(const std::string &out, const std::string &flags) {
    return harvestCommand(*Fixture / "corpus", out, "--mode=interactive " + flags);
  }
  // Every log below out/logs, read by the independent reader, by validate
  // (strict) and by stats.
  static std::vector<std::string> checkEveryLog(const std::string &out) {
    std::vector<std::string> logs;
    for (const auto &entry : fs::directory_iterator(out + "/logs"))
      logs.push_back(entry.path().string());
    std::string args;
    for (const std::string &log : logs)
      args += " " + quote(log);
    if (logs.empty())
      return logs;
    CommandResult read = run(Reader + args);
    EXPECT_EQ(read.ExitCode, 0) << read.Err << read.Out;
    CommandResult valid = run(TrainingLog + " validate" + args);
    EXPECT_EQ(valid.ExitCode, 0) << valid.Err;
    CommandResult stats = run(TrainingLog + " stats --json" + args);
    EXPECT_EQ(stats.ExitCode, 0) << stats.Err;
    auto json = nlohmann::json::parse(stats.Out);
    EXPECT_EQ(json["empty_contexts"], 0);
    EXPECT_EQ(json["logs_without_observations"], 0);
    return logs;
  }

  static TempDir *Fixture;
  TempDir Work;
};
TempDir *ZeroDecisionLogs::Fixture = nullptr;

TEST_F(ZeroDecisionLogs, InlinerModulesWithoutCallSitesGetNoLog) {
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--tfrecord=" + quote(out + "/trace.tfrecord")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto j = journalByModule(out);
  ASSERT_EQ(j.size(), 4u);
  EXPECT_GT(j["calls.o"]["decisions"].get<int>(), 0);
  EXPECT_EQ(j["calls.o"]["log_written"], true);
  for (const char *module : {"nocalls.o", "nobody.o"}) {
    SCOPED_TRACE(module);
    EXPECT_EQ(j[module]["status"], "ok");
    EXPECT_EQ(j[module]["decisions"], 0);
    EXPECT_EQ(j[module]["log_written"], false);
    EXPECT_FALSE(exists(out + "/logs/" + module + ".log"));
  }
  EXPECT_GE(j["nocalls.o"]["streams"].get<int>(), 1) << "opt opened the channel and sent a context line";
  auto summary = nlohmann::json::parse(readFile(out + "/summary.json"));
  EXPECT_EQ(summary["modules"]["ok"], 4);
  EXPECT_GE(summary["modules"]["without_log"].get<int>(), 2);
  EXPECT_NE(r.Err.find("without decisions, so without a log"), std::string::npos) << r.Err;
  std::vector<std::string> logs = checkEveryLog(out);
  EXPECT_EQ(logs.size(), static_cast<size_t>(4 - summary["modules"]["without_log"].get<int>()));
  // Resume counts them as done.
  CommandResult again = run(harvest(out, ""));
  EXPECT_NE(again.Err.find("resuming: 4 of 4"), std::string::npos) << again.Err;
}

TEST_F(ZeroDecisionLogs, RegallocFunctionsWithoutEvictionsGetNoContextLine) {
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--problem=regalloc-evict --policy=random:0.5:1"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto j = journalByModule(out);
  ASSERT_GT(j["mixed.o"]["decisions"].get<int>(), 0) << j["mixed.o"].dump();
  for (const char *module : {"nocalls.o", "nobody.o"}) {
    SCOPED_TRACE(module);
    EXPECT_EQ(j[module]["status"], "ok") << j[module].dump();
    EXPECT_EQ(j[module]["decisions"], 0);
    EXPECT_EQ(j[module]["log_written"], false);
    EXPECT_FALSE(exists(out + "/logs/" + module + ".log"));
  }
  std::vector<std::string> logs = checkEveryLog(out);
  ASSERT_FALSE(logs.empty());
  // mixed.o's trivial functions were allocated (llc sent their context
  // lines) but have no evictions: no context line of theirs is in the log.
  std::string text = readFile(out + "/logs/mixed.o.log");
  EXPECT_NE(text.find("{\"context\":\"hot\"}"), std::string::npos);
  EXPECT_EQ(text.find("{\"context\":\"twice\"}"), std::string::npos);
  EXPECT_EQ(text.find("{\"context\":\"add\"}"), std::string::npos);
}

// validate is strict by default: a context line without an observation is
// an error with its byte offset; --lenient accepts it. The independent
// reader fails on the same log, as LLVM's log_reader.py does.
TEST_F(ZeroDecisionLogs, ValidateFlagsContextsWithoutObservations) {
  std::string header = R"({"features":[{"name":"a","type":"int64_t","port":0,"shape":[1]}]})"
                       "\n";
  std::string observation = std::string("{\"observation\":0}\n") + std::string(8, '\x01') + "\n";
  std::string cases[] = {header + "{\"context\":\"f\"}\n",                                     // at the end
                         header + "{\"context\":\"f\"}\n{\"context\":\"g\"}\n" + observation}; // then another
  for (const std::string &text : cases) {
    writeFile(Work / "empty.log", text);
    CommandResult strict = run(TrainingLog + " validate " + quote(Work / "empty.log"));
    EXPECT_EQ(strict.ExitCode, 1);
    EXPECT_NE(strict.Err.find("empty.log: at byte " + std::to_string(header.size()) +
                              ": context 'f' has no observation after it"),
              std::string::npos)
        << strict.Err;
    CommandResult lenient = run(TrainingLog + " validate --lenient " + quote(Work / "empty.log"));
    EXPECT_EQ(lenient.ExitCode, 0) << lenient.Err;
    EXPECT_NE(run(Reader + quote(Work / "empty.log")).ExitCode, 0);
    auto stats = nlohmann::json::parse(run(TrainingLog + " stats --json " + quote(Work / "empty.log")).Out);
    EXPECT_EQ(stats["empty_contexts"], 1);
  }
}

} // namespace
