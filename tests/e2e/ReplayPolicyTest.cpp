// harvest-logs --policy=replay:FILE: a trajectory written out by
// `training-log trajectories` and replayed must give the recorded harvest's
// logs byte for byte and its native sizes, in plugin and interactive mode;
// a module the file lacks, or whose compile asks for more or fewer decisions
// than recorded, fails alone and says why.
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

using namespace mlgo::test;

namespace {

const std::vector<std::string> Modules = {"m1.o", "m2.o", "m3.o", "m4.o"};

class ReplayPolicy : public SmallInlinerCorpusSuite {
protected:
  std::string harvest(const std::string &out, const std::string &flags) {
    return harvestCommand(corpus(), out, "--num_workers=2 " + flags);
  }

  // A random harvest, its trajectories, and their replay: equal logs and sizes.
  void expectReplayReproduces(const std::string &modeFlags) {
    std::string recorded = Work / "recorded", replayed = Work / "replayed", file = Work / "trajectories.jsonl";
    mustRun(harvest(recorded, modeFlags + " --policy=random:0.5:11"));
    CommandResult written = run(tool("training-log") + " trajectories " + quote(recorded) + " --output=" + quote(file));
    ASSERT_EQ(written.ExitCode, 0) << written.Err;
    EXPECT_NE(written.Err.find("4 trajectories"), std::string::npos) << written.Err;
    mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " --lines " +
            quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/trajectories.schema.json") + " " + quote(file));
    CommandResult r = run(harvest(replayed, modeFlags + " --policy=replay:" + quote(file)));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    auto a = journalByModule(recorded), b = journalByModule(replayed);
    for (const std::string &m : Modules) {
      ASSERT_EQ(a[m]["status"], "ok") << m << a[m].dump();
      ASSERT_EQ(b[m]["status"], "ok") << m << b[m].dump();
      EXPECT_GT(a[m]["decisions"].get<size_t>(), 10u) << m;
      EXPECT_EQ(a[m]["decisions"], b[m]["decisions"]) << m;
      EXPECT_EQ(a[m]["native_size"], b[m]["native_size"]) << m;
      std::string la = readFile(recorded + "/logs/" + m + ".log"), lb = readFile(replayed + "/logs/" + m + ".log");
      EXPECT_TRUE(la == lb) << m << ": the logs differ (" << la.size() << " and " << lb.size() << " bytes)";
    }
    // The random policy's decisions differ from the default's, so a replay
    // that fell back to the default would not match.
    std::string text = readFile(file);
    EXPECT_NE(text.find("1,0"), std::string::npos) << text;
    EXPECT_EQ(harvestSummary(replayed)["policy"], "replay:" + file);
  }

  TempDir Work;
};

TEST_F(ReplayPolicy, ReplayOfARandomHarvestEqualsItInPluginMode) { expectReplayReproduces("--mode=plugin"); }

TEST_F(ReplayPolicy, ReplayOfARandomHarvestEqualsItInInteractiveMode) { expectReplayReproduces("--mode=interactive"); }

TEST_F(ReplayPolicy, ReplayOfARandomHarvestEqualsItThroughClangInPluginMode) {
  expectReplayReproduces("--mode=plugin --compiler=clang");
}

// m1 missing, m2 one decision short, m3 one decision long, m4 exact: each
// of the first three fails alone, with the reason in the journal.
TEST_F(ReplayPolicy, MissingModuleAndWrongLengthsFailOnlyThoseModules) {
  std::string recorded = Work / "recorded";
  mustRun(harvest(recorded, "--mode=plugin --policy=random:0.5:3"));
  std::string all = Work / "all.jsonl";
  mustRun(tool("training-log") + " trajectories " + quote(recorded) + " --output=" + quote(all));
  std::map<std::string, nlohmann::json> lines;
  std::istringstream text(readFile(all));
  for (std::string line; std::getline(text, line);)
    if (!line.empty()) {
      nlohmann::json j = nlohmann::json::parse(line);
      lines[j["module"]] = j;
    }
  ASSERT_EQ(lines.size(), 4u) << "a module failed in the recorded harvest: " << readFile(recorded + "/harvest.jsonl");
  lines["m2.o"]["decisions"].erase(lines["m2.o"]["decisions"].size() - 1);
  lines["m3.o"]["decisions"].push_back(1);
  std::string edited = Work / "edited.jsonl";
  writeFile(edited, lines["m2.o"].dump() + "\n" + lines["m3.o"].dump() + "\n" + lines["m4.o"].dump() + "\n");
  size_t m2 = lines["m2.o"]["decisions"].size(), m3 = lines["m3.o"]["decisions"].size();

  for (const std::string mode : {"plugin", "interactive"}) {
    std::string out = Work / ("replay-" + mode);
    CommandResult r = run(harvest(out, "--strict --mode=" + mode + " --policy=replay:" + quote(edited)));
    EXPECT_EQ(r.ExitCode, 3) << mode << ": --strict exits 3 when a module failed\n" << r.Err;
    auto j = journalByModule(out);
    EXPECT_EQ(j["m1.o"]["status"], "failed") << mode;
    EXPECT_EQ(j["m1.o"]["reason"], "policy_error") << mode;
    EXPECT_NE(j["m1.o"]["detail"].get<std::string>().find("has no trajectory for module m1.o"), std::string::npos)
        << j["m1.o"].dump();
    // Too short: the compile asks for one more than recorded.
    EXPECT_EQ(j["m2.o"]["status"], "failed") << mode;
    EXPECT_EQ(j["m2.o"]["reason"], mode == "plugin" ? "plugin_failed" : "policy_error") << j["m2.o"].dump();
    EXPECT_NE(j["m2.o"]["detail"].get<std::string>().find("the recorded trajectory of m2.o has " + std::to_string(m2) +
                                                          " decisions and the compile asked for more"),
              std::string::npos)
        << j["m2.o"].dump();
    // Too long: the compile ends before the trajectory does.
    EXPECT_EQ(j["m3.o"]["status"], "failed") << mode;
    EXPECT_EQ(j["m3.o"]["reason"], "policy_error") << mode;
    EXPECT_NE(j["m3.o"]["detail"].get<std::string>().find("the recorded trajectory of m3.o has " + std::to_string(m3) +
                                                          " decisions and the compile asked for " +
                                                          std::to_string(m3 - 1)),
              std::string::npos)
        << j["m3.o"].dump();
    EXPECT_EQ(j["m4.o"]["status"], "ok") << mode << j["m4.o"].dump();
    EXPECT_TRUE(readFile(out + "/logs/m4.o.log") == readFile(recorded + "/logs/m4.o.log")) << mode;
    EXPECT_FALSE(std::filesystem::exists(out + "/logs/m2.o.log")) << mode;
  }
}

TEST_F(ReplayPolicy, AMalformedTrajectoriesFileStopsTheRunBeforeAnyCompile) {
  std::string bad = Work / "bad.jsonl";
  writeFile(bad, "{\"module\":\"m1.o\",\"decisions\":[0,2]}\n");
  CommandResult r = run(harvest(Work / "out", "--mode=interactive --policy=replay:" + quote(bad)));
  EXPECT_NE(r.ExitCode, 0);
  EXPECT_NE(r.Err.find(bad + " line 1: `decisions` of m1.o holds 2: each decision must be 0 or 1"), std::string::npos)
      << r.Err;
}

// A trajectories file is data: its `then` cannot make the harvester read a
// model it was not given (an exploration passes its own base model).
TEST_F(ReplayPolicy, AThenModelTheRunWasNotGivenIsRefused) {
  std::string file = Work / "then.jsonl";
  writeFile(file,
            "{\"module\":\"m1.o\",\"decisions\":[],\"then\":\"tflite:" + std::string(Work / "elsewhere") + "\"}\n");
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--mode=interactive --modules_filter='m1' --policy=replay:" + quote(file)));
  auto j = journalByModule(out);
  ASSERT_TRUE(j.count("m1.o")) << r.Err;
  EXPECT_EQ(j["m1.o"]["reason"], "policy_error") << j["m1.o"].dump();
  EXPECT_NE(j["m1.o"]["detail"].get<std::string>().find("a model this run was not given"), std::string::npos)
      << j["m1.o"].dump();
}

} // namespace
