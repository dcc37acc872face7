// Explored shards: each shard of an explored harvest (--explore with
// --shard=I/N) merges with merge-harvest into the one-machine exploration,
// its rollouts beside the base's features too; a shard that was not
// explored, or lies about it, is refused.
#include "support/ExploreFixture.h"
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

// Sharded explorations merge into the one-machine exploration: the same
// explore.jsonl, kept logs and sites, latest journal records, profiles,
// imitation TFRecord and summary explore.
class ExploredShards : public HarvestExplore {
protected:
  std::string merge(const std::string &out, const std::vector<std::string> &shards, const std::string &flags = "") {
    std::string command =
        tool("merge-harvest") + " --corpus=" + quote(corpus()) + " --output_dir=" + quote(out) + " " + flags;
    for (const std::string &shard : shards)
      command += " " + quote(shard);
    return command;
  }
  std::vector<std::string> exploreShards(const std::string &flags) {
    std::vector<std::string> dirs = {Work / "shard-0", Work / "shard-1"};
    for (size_t i = 0; i < dirs.size(); ++i)
      mustRun(harvest(dirs[i], flags + " --shard=" + std::to_string(i) + "/2"));
    return dirs;
  }
  static std::map<std::string, nlohmann::json> latestWithoutSeconds(const std::string &dir) {
    auto records = journalByModule(dir);
    for (auto &[name, record] : records)
      record.erase("seconds");
    return records;
  }
  const std::string Flags = "--mode=plugin --decision_sites --policy=random:0.5:11 --explore=2 --explore_order=first";
};

TEST_F(ExploredShards, MergeIntoTheOneMachineExploration) {
  std::string one = Work / "one", merged = Work / "merged";
  mustRun(harvest(one, Flags + " --tfrecord=" + quote(Work / "one.tfrecord")));
  auto shards = exploreShards(Flags);
  CommandResult r = run(merge(merged, shards, "--tfrecord=" + quote(Work / "merged.tfrecord")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(merged + "/explore.jsonl"), readFile(one + "/explore.jsonl"));
  for (const std::string &m : Modules) {
    EXPECT_TRUE(readFile(merged + "/logs/" + m + ".log") == readFile(one + "/logs/" + m + ".log")) << m;
    EXPECT_EQ(readFile(merged + "/logs/" + m + ".sites.jsonl"), readFile(one + "/logs/" + m + ".sites.jsonl")) << m;
  }
  EXPECT_EQ(latestWithoutSeconds(merged), latestWithoutSeconds(one));
  for (const char *profile : {"/profile_max.json", "/profile_pol.json"})
    EXPECT_EQ(readFile(merged + profile), readFile(one + profile)) << profile;
  std::string tfrecord = readFile(Work / "one.tfrecord");
  EXPECT_GT(tfrecord.size(), 1000u);
  EXPECT_TRUE(readFile(Work / "merged.tfrecord") == tfrecord) << "the imitation TFRecord differs";
  nlohmann::json a = harvestSummary(merged)["explore"], b = harvestSummary(one)["explore"];
  EXPECT_EQ(a["profiles"], merged + "/profile");
  EXPECT_EQ(a["trajectory_tfrecord"]["path"], Work / "merged.tfrecord");
  for (nlohmann::json *s : {&a, &b})
    s->erase("profiles"), (*s)["trajectory_tfrecord"].erase("path");
  EXPECT_EQ(a, b);
  EXPECT_GT(b["improved"].get<int>(), 0);
  checkSchema("harvest_summary.schema.json", merged + "/summary.json", false);
}

TEST_F(ExploredShards, AShardThatWasNotExploredOrLiesIsRefused) {
  std::string plainFlags = "--mode=plugin --decision_sites --policy=random:0.5:11";
  std::vector<std::string> shards = {Work / "shard-0", Work / "shard-1"};
  mustRun(harvest(shards[0], Flags + " --shard=0/2"));
  mustRun(harvest(shards[1], plainFlags + " --shard=1/2"));
  CommandResult mixed = run(merge(Work / "m1", shards));
  EXPECT_EQ(mixed.ExitCode, 1) << mixed.Err;
  EXPECT_NE(mixed.Err.find("was explored (summary.json's explore) but shard 1/2"), std::string::npos) << mixed.Err;
  EXPECT_FALSE(fs::exists(Work / "m1"));

  // Both explored; shard 0's table then names a module of shard 1, keeps
  // two trajectories of a module, or skips a trajectory.
  fs::remove_all(shards[1]);
  mustRun(harvest(shards[1], Flags + " --shard=1/2"));
  std::string table = readFile(shards[0] + "/explore.jsonl");
  std::vector<nlohmann::json> lines = jsonLines(shards[0] + "/explore.jsonl");
  std::string other = jsonLines(shards[1] + "/explore.jsonl").front()["module"];
  using Lines = std::vector<nlohmann::json>;
  auto tamper = [&](const std::string &name, const std::function<void(Lines &)> &edit, const std::string &expected) {
    std::vector<nlohmann::json> edited = lines;
    edit(edited);
    std::string text;
    for (const nlohmann::json &j : edited)
      text += j.dump() + "\n";
    writeFile(shards[0] + "/explore.jsonl", text);
    CommandResult r = run(merge(Work / name, shards));
    EXPECT_EQ(r.ExitCode, 1) << name << ": " << r.Err;
    EXPECT_NE(r.Err.find(expected), std::string::npos) << name << ": " << r.Err;
    EXPECT_FALSE(fs::exists(Work / name)) << name;
  };
  tamper(
      "foreign", [&](Lines &l) { l.back()["module"] = other; }, "is not one its journal finished");
  tamper(
      "two-kept", [&](Lines &l) { l[0]["kept"] = true, l[1]["kept"] = true; }, "not exactly one kept");
  tamper(
      "gap", [&](Lines &l) { l.erase(l.begin() + 1); }, "where 1 was due");
  tamper(
      "type", [&](Lines &l) { l[0]["native_size"] = "big"; }, "native_size is neither null nor a count");
  tamper(
      "site",
      [&](Lines &l) {
        l[1]["flipped_site"] = {{"caller", 1}, {"callee", "g"}, {"site", 0}, {"loc", nullptr}};
      },
      "flipped_site's caller, callee, site or loc has the wrong type");
  tamper(
      "site-key", [&](Lines &l) { l[1]["flipped_site"]["column"] = 3; },
      "flipped_site is neither null nor an object of caller, callee, site and loc");
  tamper(
      "site-negative", [&](Lines &l) { l[1]["flipped_site"]["site"] = -1; },
      "flipped_site's caller, callee, site or loc has the wrong type");
  tamper(
      "older", [&](Lines &l) { l[1].erase("flipped_site"); }, "has no flipped_site (explored by an mlgo-corpus before");
  tamper(
      "base-site", [&](Lines &l) { l[0]["flipped_site"] = l[1]["flipped_site"]; },
      "flipped_site names a call site but flipped_step is null");
  tamper(
      "size",
      [&](Lines &l) {
        for (auto &j : l)
          if (j["kept"])
            j["native_size"] = j["native_size"].get<uint64_t>() + 1;
      },
      "that its shard's journal does not describe");
  // A FIFO in place of the table is refused, not read forever.
  fs::remove(shards[0] + "/explore.jsonl");
  ASSERT_EQ(::mkfifo((shards[0] + "/explore.jsonl").c_str(), 0600), 0);
  CommandResult fifo = run(merge(Work / "fifo", shards));
  EXPECT_EQ(fifo.ExitCode, 1) << fifo.Err;
  EXPECT_NE(fifo.Err.find("explore.jsonl cannot be read"), std::string::npos) << fifo.Err;
  fs::remove(shards[0] + "/explore.jsonl");
  writeFile(shards[0] + "/explore.jsonl", table);
  EXPECT_EQ(run(merge(Work / "good", shards)).ExitCode, 0);
}

// A trajectories dataset that cannot be written costs only itself: the
// exploration is recorded whole (summary explore, explore.jsonl, kept logs),
// and merge-harvest --tfrecord on that directory writes the dataset a
// successful run writes.
TEST_F(ExploredShards, ADatasetThatCannotBeWrittenLeavesTheExplorationWhole) {
  std::string out = Work / "out", good = Work / "good";
  fs::create_directories(Work / "taken.tfrecord"); // a directory where the file should go
  CommandResult r = run(harvest(out, Flags + " --tfrecord=" + quote(Work / "taken.tfrecord")));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("the exploration itself is complete"), std::string::npos) << r.Err;
  nlohmann::json explore = harvestSummary(out)["explore"];
  ASSERT_TRUE(explore.is_object()) << harvestSummary(out).dump(2);
  EXPECT_FALSE(explore.contains("trajectory_tfrecord"));
  mustRun(harvest(good, Flags + " --tfrecord=" + quote(Work / "good.tfrecord")));
  EXPECT_EQ(readFile(out + "/explore.jsonl"), readFile(good + "/explore.jsonl"));
  CommandResult merged = run(merge(Work / "merged", {out}, "--tfrecord=" + quote(Work / "again.tfrecord")));
  ASSERT_EQ(merged.ExitCode, 0) << merged.Err;
  EXPECT_TRUE(readFile(Work / "again.tfrecord") == readFile(Work / "good.tfrecord"));
}

// Rollout shards merge with their rollout logs and sites: the merged
// directory's are the one-machine run's, byte for byte.
TEST_F(ExploredShards, RolloutShardsMergeWithTheirRolloutLogs) {
  const std::string rollouts = "--mode=plugin --explore=3 --explore_order=rollouts:first";
  std::string one = Work / "one", merged = Work / "merged";
  mustRun(harvest(one, rollouts));
  CommandResult r = run(merge(merged, exploreShards(rollouts)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(merged + "/explore.jsonl"), readFile(one + "/explore.jsonl"));
  for (const std::string &m : Modules) {
    std::string log = readFile(one + "/rollouts/" + m + ".log");
    EXPECT_FALSE(log.empty()) << m;
    EXPECT_TRUE(readFile(merged + "/rollouts/" + m + ".log") == log) << m;
    std::string sites = readFile(one + "/rollouts/" + m + ".sites.jsonl");
    EXPECT_FALSE(sites.empty()) << m;
    EXPECT_EQ(readFile(merged + "/rollouts/" + m + ".sites.jsonl"), sites) << m;
  }
}

} // namespace
