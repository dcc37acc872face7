// merge-harvest end to end: shards harvested by hand (--shard=I/N) with the
// real opt-22/llc-22 merge into the one-machine run's bytes; missing or
// unfinished shards are named and nothing is written.
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Harvest = mlgo::test::tool("harvest-logs");
const std::string Merge = mlgo::test::tool("merge-harvest");

class HarvestMerge : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    Corpus = makeHarvestCorpus(Fixture->path(), 12);
  }
  static void TearDownTestSuite() { delete Fixture; }

  static std::string harvest(const std::string &out, const std::string &flags) {
    return Harvest + " -q --num_workers=2 --corpus=" + quote(Corpus) + " --output_dir=" + quote(out) + " " + flags;
  }
  std::string merge(const std::string &out, const std::vector<std::string> &shards, const std::string &flags = "") {
    std::string command = Merge + " --corpus=" + quote(Corpus) + " --output_dir=" + quote(out) + " " + flags;
    for (const std::string &shard : shards)
      command += " " + quote(shard);
    return command;
  }
  std::vector<std::string> shardDirs(int count) {
    std::vector<std::string> dirs;
    for (int i = 0; i < count; ++i)
      dirs.push_back(Work / ("shards/shard-" + std::to_string(i)));
    return dirs;
  }
  std::vector<std::string> harvestShards(int count, const std::string &flags = "") {
    auto dirs = shardDirs(count);
    for (int i = 0; i < count; ++i)
      mustRun(harvest(dirs[i], "--shard=" + std::to_string(i) + "/" + std::to_string(count) + " " + flags));
    return dirs;
  }
  void expectEqualToOneMachine(const std::string &merged, const std::string &one) {
    expectSameLogs(merged, one);
    EXPECT_EQ(journalWithoutTimings(merged), journalWithoutTimings(one));
    EXPECT_EQ(summaryWithoutTimings(merged), summaryWithoutTimings(one));
  }

  static TempDir *Fixture;
  static std::string Corpus;
  TempDir Work;
};
TempDir *HarvestMerge::Fixture = nullptr;
std::string HarvestMerge::Corpus;

TEST_F(HarvestMerge, ShardsMergeIntoTheOneMachineRun) {
  mustRun(harvest(Work / "one", "--tfrecord=" + quote(Work / "one.tfrecord")));
  auto shards = harvestShards(3);
  CommandResult r = run(merge(Work / "merged", shards, "--tfrecord=" + quote(Work / "merged.tfrecord")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("merged 12 of 12 modules"), std::string::npos) << r.Err;
  expectEqualToOneMachine(Work / "merged", Work / "one");
  std::string tfrecord = readFile(Work / "one.tfrecord");
  EXPECT_GT(tfrecord.size(), 1000u);
  EXPECT_EQ(readFile(Work / "merged.tfrecord"), tfrecord);
  auto summary = nlohmann::json::parse(readFile(Work / "merged/summary.json"));
  EXPECT_EQ(summary["merge"]["complete"], true);
  EXPECT_EQ(summary["merge"]["shards"].size(), 3u);
  std::string formats = std::string(MLGO_SOURCE_DIR) + "/corpus_formats/";
  std::string check = "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " ";
  mustRun(check + quote(formats + "harvest_summary.schema.json") + " " + quote(Work / "merged/summary.json"));
  mustRun(check + "--lines " + quote(formats + "harvest_journal.schema.json") + " " +
          quote(Work / "merged/harvest.jsonl"));
  // No staging directory is left next to the output; merging again replaces it.
  for (const std::string &entry : listTree(Work.path()))
    EXPECT_EQ(entry.find("merge-tmp"), std::string::npos) << entry;
  ASSERT_EQ(run(merge(Work / "merged", shards)).ExitCode, 0);
  expectEqualToOneMachine(Work / "merged", Work / "one");
  // The output directory is replaced as a whole: never one holding a shard,
  // nor one that is not an earlier merge.
  r = run(merge(Work / "shards", shards));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("holds the shard"), std::string::npos) << r.Err;
  r = run(merge(Work / "one", shards));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("is not an earlier merge-harvest output"), std::string::npos) << r.Err;
  for (const std::string &shard : shards)
    EXPECT_TRUE(exists(shard + "/harvest.jsonl")) << shard;
  expectSameLogs(Work / "merged", Work / "one");
  // Hard links give the same tree.
  ASSERT_EQ(run(merge(Work / "linked", shards, "--link")).ExitCode, 0);
  expectEqualToOneMachine(Work / "linked", Work / "one");
}

// The merged compile_server: used only if every shard used the server (the
// reason then names the shard that did not), starts added up, the largest
// peak RSS.
TEST_F(HarvestMerge, TheCompileServerCountsAsUsedOnlyIfEveryShardUsedIt) {
  auto dirs = shardDirs(2);
  mustRun(harvest(dirs[0], "--shard=0/2 --compile_server=on"));
  mustRun(harvest(dirs[1], "--shard=1/2 --compile_server=on"));
  ASSERT_EQ(run(merge(Work / "all-on", dirs)).ExitCode, 0);
  auto first = harvestSummary(dirs[0])["compile_server"], second = harvestSummary(dirs[1])["compile_server"];
  auto merged = harvestSummary(Work / "all-on")["compile_server"];
  EXPECT_EQ(merged["used"], true);
  EXPECT_EQ(merged["reason"], "--compile_server=on");
  EXPECT_EQ(merged["starts"], first["starts"].get<int>() + second["starts"].get<int>());
  EXPECT_EQ(merged["peak_rss_kb"], std::max(first["peak_rss_kb"].get<long>(), second["peak_rss_kb"].get<long>()));

  std::filesystem::remove_all(dirs[1]);
  mustRun(harvest(dirs[1], "--shard=1/2 --compile_server=off"));
  CommandResult r = run(merge(Work / "one-off", dirs));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  merged = harvestSummary(Work / "one-off")["compile_server"];
  EXPECT_EQ(merged["used"], false);
  EXPECT_EQ(merged["reason"], dirs[1] + ": --compile_server=off") << merged.dump();
  EXPECT_EQ(merged["starts"], first["starts"]);
}

TEST_F(HarvestMerge, SelectionFlagsMustMatchTheShards) {
  std::string selection = "--sampling_rate=0.5 --seed=7 --modules_filter=m[0-9]";
  mustRun(harvest(Work / "one", selection + " --tfrecord=" + quote(Work / "one.tfrecord")));
  auto shards = harvestShards(2, selection);
  ASSERT_EQ(run(merge(Work / "merged", shards, selection + " --tfrecord=" + quote(Work / "m.tfrecord"))).ExitCode, 0);
  expectEqualToOneMachine(Work / "merged", Work / "one");
  EXPECT_EQ(readFile(Work / "m.tfrecord"), readFile(Work / "one.tfrecord"));
  // With other selection flags the shards hold modules outside their plan.
  CommandResult r = run(merge(Work / "bad", shards, "--sampling_rate=0.5 --seed=7 --modules_filter=m1"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("is not in shard"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "bad"));
  // Shards given out of order are refused.
  r = run(merge(Work / "bad", {shards[1], shards[0]}, selection));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("says shard 1/2, but it is merged as shard 0/2"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "bad"));
}

TEST_F(HarvestMerge, MissingOrUnfinishedShardsAreNamedAndNothingIsWritten) {
  mustRun(harvest(Work / "one", ""));
  auto shards = harvestShards(3);
  auto planOf = [&](int shard) {
    std::vector<std::string> modules;
    std::istringstream in(readFile(shards[shard] + "/harvest.jsonl"));
    for (std::string line; std::getline(in, line);)
      if (auto j = nlohmann::json::parse(line); !j.contains("options")) // skip the header
        modules.push_back(j["module"]);
    return modules;
  };
  auto shard1 = planOf(1);
  ASSERT_EQ(shard1.size(), 4u);
  fs::rename(shards[1], Work / "aside");
  std::string tfrecord = Work / "t.tfrecord";
  CommandResult r = run(merge(Work / "merged", shards, "--tfrecord=" + quote(tfrecord)));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("shard 1/3 (" + shards[1] + "): the directory does not exist; 4 of 4 modules absent"),
            std::string::npos)
      << r.Err;
  for (const std::string &module : shard1)
    EXPECT_NE(r.Err.find(module), std::string::npos) << module << " not named in " << r.Err;
  EXPECT_FALSE(exists(Work / "merged"));
  EXPECT_FALSE(exists(tfrecord));

  // A shard killed before it finished: two modules without a journal line,
  // one whose log vanished.
  fs::rename(Work / "aside", shards[1]);
  std::string journal = readFile(shards[1] + "/harvest.jsonl");
  std::string lostLog = planOf(2)[0];
  // The options header and the first record: the shard stopped after one module.
  writeFile(shards[1] + "/harvest.jsonl", journal.substr(0, journal.find('\n', journal.find('\n') + 1) + 1));
  fs::remove(shards[2] + "/logs/" + lostLog + ".log");
  r = run(merge(Work / "merged", shards));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("shard 1/3 (" + shards[1] + "): 3 of 4 modules absent: "), std::string::npos) << r.Err;
  // Named in plan order; the journal lists them as they finished, so check each.
  for (size_t k = 1; k < 4; ++k)
    EXPECT_NE(r.Err.find(shard1[k]), std::string::npos) << shard1[k] << r.Err;
  EXPECT_NE(r.Err.find(lostLog + " (journal says ok, log missing)"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "merged"));

  // --allow_partial merges the rest and lists what is missing; harvest-logs
  // on the merged directory then finishes it into the one-machine run.
  r = run(merge(Work / "merged", shards, "--allow_partial"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto summary = nlohmann::json::parse(readFile(Work / "merged/summary.json"));
  EXPECT_EQ(summary["merge"]["complete"], false);
  EXPECT_EQ(summary["merge"]["missing_modules"].size(), 4u);
  EXPECT_EQ(summary["modules"]["planned"], 12);
  EXPECT_EQ(summary["modules"]["ok"], 8);
  mustRun(harvest(Work / "merged", ""));
  expectSameLogs(Work / "merged", Work / "one");
  EXPECT_EQ(journalWithoutTimings(Work / "merged"), journalWithoutTimings(Work / "one"));
}

TEST_F(HarvestMerge, ShardAutoOutsideASchedulerIsAnError) {
  CommandResult r =
      run("env -u SLURM_ARRAY_TASK_ID -u SLURM_JOB_ID -u JOB_COMPLETION_INDEX " + harvest(Work / "o", "--shard=auto"));
  EXPECT_EQ(r.ExitCode, 2);
  EXPECT_NE(r.Err.find("no scheduler shard variables are set"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "o"));
  r = run("env -u SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX=1 JOB_COMPLETIONS=3 " + harvest(Work / "k", "--shard=auto"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(nlohmann::json::parse(readFile(Work / "k/summary.json"))["shard"], "1/3");
}

} // namespace
