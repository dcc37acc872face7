// The trajectories file of --policy=replay:FILE: what a line may hold, what
// stops a run, and when a compile's decision count matches a trajectory.
#include "mlgo/policy/Trajectory.h"
#include "mlgo/explore/Exploration.h"
#include "mlgo/explore/ImitationDataset.h"
#include "mlgo/policy/Policy.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

using namespace mlgo;
using namespace mlgo::test;

namespace {

std::string parseError(const std::string &line) {
  std::string module;
  Trajectory trajectory;
  llvm::Error e = parseTrajectoryLine(line, "F line 1", module, trajectory);
  return e ? llvm::toString(std::move(e)) : "";
}

TEST(Trajectory, WrittenLinesReadBack) {
  TempDir dir;
  std::string path = dir / "t.jsonl";
  writeFile(path, trajectoryLine("a/b.o", {true, false, true}) + "\n" + trajectoryLine("c.o", {}, "random:0.5:3"));
  EXPECT_EQ(trajectoryLine("a/b.o", {true, false}), "{\"module\":\"a/b.o\",\"decisions\":[1,0]}\n");
  auto set = readTrajectories(path);
  ASSERT_TRUE(static_cast<bool>(set)) << llvm::toString(set.takeError());
  ASSERT_EQ(set->size(), 2u);
  EXPECT_EQ(set->at("a/b.o").Recorded, (DecisionSequence{true, false, true}));
  EXPECT_EQ(set->at("a/b.o").Then, "");
  EXPECT_TRUE(set->at("c.o").Recorded.empty());
  EXPECT_EQ(set->at("c.o").Then, "random:0.5:3");
}

TEST(Trajectory, MalformedLinesAreErrorsNamingTheLine) {
  EXPECT_EQ(parseError("[1]"), "F line 1: not a JSON object");
  EXPECT_EQ(parseError("{\"decisions\":[1]}"), "F line 1: `module` must be a non-empty string");
  EXPECT_EQ(parseError("{\"module\":\"m\",\"decisions\":1}"), "F line 1: `decisions` must be an array of 0 and 1");
  EXPECT_EQ(parseError("{\"module\":\"m\",\"decisions\":[true]}"),
            "F line 1: `decisions` of m holds true: each decision must be 0 or 1");
  EXPECT_EQ(parseError("{\"module\":\"m\",\"decisions\":[],\"then\":\"model:x\"}"),
            "F line 1: `then` of m must be \"default\", \"random:P:SEED\", \"tflite:DIR\" or \"exec:CMD\"");
  EXPECT_EQ(parseError("{\"module\":\"m\",\"decisions\":[0],\"other\":2}"), "") << "other keys are ignored";
}

// A trajectories file is data: its `then` may name only the run's command.
TEST(Trajectory, AThenCommandTheRunWasNotGivenIsRefused) {
  TempDir dir;
  std::string path = dir / "t.jsonl", marker = dir / "ran";
  writeFile(path, trajectoryLine("m", {true}, "exec:touch " + marker));
  ReplayThen allowed;
  allowed.Exec.How = PolicySpec::Kind::Exec;
  allowed.Exec.Command = "python3 my_policy.py";
  for (const ReplayThen &then : {ReplayThen{}, allowed}) {
    auto policy = makeReplayPolicy(path, then);
    ASSERT_TRUE(static_cast<bool>(policy)) << llvm::toString(policy.takeError());
    llvm::Error e = (*policy)->beginModule("m");
    ASSERT_TRUE(static_cast<bool>(e));
    EXPECT_EQ(llvm::toString(std::move(e)),
              "replay: `then` names exec:touch " + marker + ", a command this run was not given");
  }
  EXPECT_FALSE(exists(marker));
}

TEST(Trajectory, AModuleListedTwiceIsAnError) {
  TempDir dir;
  std::string path = dir / "t.jsonl";
  writeFile(path, trajectoryLine("m", {true}) + trajectoryLine("m", {false}));
  auto set = readTrajectories(path);
  ASSERT_FALSE(static_cast<bool>(set));
  EXPECT_EQ(llvm::toString(set.takeError()), path + " line 2: module m is listed twice");
}

TEST(Trajectory, ExactLengthUnlessAThenPolicyContinues) {
  Trajectory exact{{true, false}, ""}, prefix{{true, false}, "default"};
  EXPECT_FALSE(replayMismatch("m", exact, 2));
  EXPECT_TRUE(replayMismatch("m", exact, 1));
  EXPECT_TRUE(replayMismatch("m", exact, 3));
  EXPECT_FALSE(replayMismatch("m", prefix, 2));
  EXPECT_FALSE(replayMismatch("m", prefix, 9));
  EXPECT_EQ(*replayMismatch("m", prefix, 1),
            "replay: the recorded trajectory of m has 2 decisions and the compile asked "
            "for 1 (the module, compiler or options differ from the recorded harvest's)");
}

TEST(Trajectory, ExploreOrders) {
  ExploreSettings settings;
  EXPECT_FALSE(static_cast<bool>(parseExploreOrder("random:17", settings)));
  EXPECT_EQ(settings.describeOrder(), "random:17");
  EXPECT_FALSE(static_cast<bool>(parseExploreOrder("first", settings)));
  EXPECT_EQ(settings.describeOrder(), "first");
  EXPECT_FALSE(static_cast<bool>(parseExploreOrder("uncertain", settings)));
  EXPECT_EQ(settings.describeOrder(), "uncertain");
  EXPECT_EQ(ExploreSettings().describeOrder(), "uncertain") << "the default order";
  EXPECT_FALSE(settings.Rollouts);
  for (auto [given, described] : {std::pair{"rollouts", "rollouts:uncertain"},
                                  {"rollouts:first", "rollouts:first"},
                                  {"rollouts:random:5", "rollouts:random:5"}}) {
    EXPECT_FALSE(static_cast<bool>(parseExploreOrder(given, settings))) << given;
    EXPECT_TRUE(settings.Rollouts) << given;
    EXPECT_FALSE(settings.Search) << given;
    EXPECT_EQ(settings.describeOrder(), described);
  }
  for (auto [given, described] : {std::pair{"search", "search:uncertain"},
                                  {"search:first", "search:first"},
                                  {"search:random:2", "search:random:2"}}) {
    EXPECT_FALSE(static_cast<bool>(parseExploreOrder(given, settings))) << given;
    EXPECT_TRUE(settings.Search && settings.Rollouts) << given << ": a search is sweeps of rollouts";
    EXPECT_EQ(settings.describeOrder(), described);
  }
  EXPECT_FALSE(static_cast<bool>(parseExploreOrder("first", settings)));
  EXPECT_FALSE(settings.Rollouts) << "a chain again";
  for (const char *bad : {"Uncertain", "random:", "random:x", "", "rollouts:", "rollouts:rollouts:first",
                          "first:rollouts", "search:", "search:rollouts:first", "rollouts:search"}) {
    llvm::Error e = parseExploreOrder(bad, settings);
    EXPECT_TRUE(static_cast<bool>(e)) << bad;
    llvm::consumeError(std::move(e));
  }
}

// ml-compiler-opt's label: how many of its 19 thresholds are <= the loss.
TEST(ImitationDataset, SizeBucketsAsBisectRight) {
  EXPECT_EQ(imitationSizeThresholds().size(), 19u);
  EXPECT_EQ(imitationSizeBucket(0), 0);
  EXPECT_EQ(imitationSizeBucket(284.9), 0);
  EXPECT_EQ(imitationSizeBucket(285), 1) << "a loss equal to a threshold goes up";
  EXPECT_EQ(imitationSizeBucket(627.5), 6);
  EXPECT_EQ(imitationSizeBucket(1000), 8);
  EXPECT_EQ(imitationSizeBucket(124360.9), 18);
  EXPECT_EQ(imitationSizeBucket(124361), 19);
  EXPECT_EQ(imitationSizeBucket(1e12), 19);
}

} // namespace
