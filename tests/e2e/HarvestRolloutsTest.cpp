// Per-decision rollouts and the search of them (harvest-logs
// --explore_order=rollouts:ORDER and search:ORDER): each rollout flips one
// step of the base and follows the base policy; explore.jsonl is the rollout
// table and OUT/rollouts/<module>.log the base's log with the rollouts
// beside its features; a search keeps only improvements and resumes to the
// same result.
#include "support/ExploreFixture.h"
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/PythonPackage.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <numeric>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

// rollouts:ORDER: every explored trajectory flips one step of the base and
// follows the base policy after it; explore.jsonl is the rollout table, and
// each rollout's size is what a fresh replay of its decisions gives.
TEST_F(HarvestExplore, RolloutsFlipOneStepOfTheBaseEachAndEqualFreshReplays) {
  std::string out = Work / "out", sites = Work / "sites";
  CommandResult r = run(harvest(out, "--mode=plugin --explore=3 --explore_order=rollouts:first"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  checkSchema("explore_trajectory.schema.json", out + "/explore.jsonl", true);
  checkSchema("harvest_summary.schema.json", out + "/summary.json", false);
  EXPECT_EQ(harvestSummary(out)["explore"]["order"], "rollouts:first");
  // Forked from the base compile, as a star: every rollout (3 per module).
  EXPECT_EQ(harvestSummary(out)["explore"]["forked"], 3 * Modules.size());
  mustRun(harvest(sites, "--mode=plugin --decision_sites"));
  std::map<std::string, std::vector<nlohmann::json>> byModule;
  for (const nlohmann::json &t : jsonLines(out + "/explore.jsonl"))
    byModule[t["module"]].push_back(t);
  for (const std::string &m : Modules) {
    const auto &ts = byModule[m];
    ASSERT_EQ(ts.size(), 4u) << m;
    const nlohmann::json &base = ts[0]["decisions"];
    std::vector<nlohmann::json> baseSites = jsonLines(sites + "/logs/" + m + ".sites.jsonl");
    ASSERT_EQ(baseSites.size(), base.size()) << m;
    uint64_t smallest = ts[0]["native_size"];
    size_t keptAt = 0;
    for (size_t i = 1; i < ts.size(); ++i) {
      ASSERT_EQ(ts[i]["status"], "ok") << ts[i].dump();
      // Step i-1 of the base, flipped, after the base's own decisions.
      ASSERT_EQ(ts[i]["flipped_step"], i - 1) << m;
      const nlohmann::json &mine = ts[i]["decisions"];
      for (size_t s = 0; s + 1 < i; ++s)
        EXPECT_EQ(mine[s], base[s]) << m << " rollout " << i << " step " << s;
      EXPECT_NE(mine[i - 1], base[i - 1]) << m << " rollout " << i;
      // The call site it names is the base's at that step.
      for (const char *key : {"caller", "callee", "site"})
        EXPECT_EQ(ts[i]["flipped_site"][key], baseSites[i - 1][key]) << m << " rollout " << i << " " << key;
      if (ts[i]["native_size"].get<uint64_t>() < smallest)
        smallest = ts[i]["native_size"], keptAt = i;
    }
    for (size_t i = 0; i < ts.size(); ++i)
      EXPECT_EQ(ts[i]["kept"], i == keptAt) << m << " trajectory " << i << ": the best single flip, ties to the base";

    // rollouts/<module>.log: the base's log, each step with its rollout's size.
    std::vector<LoggedObservation> baseLog = readObservations(sites + "/logs/" + m + ".log"),
                                   withRollouts = readObservations(out + "/rollouts/" + m + ".log");
    ASSERT_EQ(withRollouts.size(), baseLog.size()) << m;
    // Beside it, the base's sites (its cost margins), which logs/ no longer
    // holds once a flip was kept.
    EXPECT_EQ(readFile(out + "/rollouts/" + m + ".sites.jsonl"), readFile(sites + "/logs/" + m + ".sites.jsonl")) << m;
    for (size_t s = 0; s < baseLog.size(); ++s) {
      LoggedObservation own = withRollouts[s];
      EXPECT_EQ(own["base_native_size"], ts[0]["native_size"].get<double>()) << m << " step " << s;
      double expected = s + 1 < ts.size() ? ts[s + 1]["native_size"].get<double>() : -1.0;
      EXPECT_EQ(own["rollout_native_size"], expected) << m << " step " << s;
      own.Features.erase("base_native_size");
      own.Features.erase("rollout_native_size");
      EXPECT_EQ(own.Features, baseLog[s].Features) << m << " step " << s << ": the base's features and decisions";
      EXPECT_EQ(own.Outcome, baseLog[s].Outcome) << m << " step " << s;
    }
  }
  // The dataset export carries the columns as it carries every feature.
  std::string record = Work / "rollouts.tfrecord";
  mustRun(tool("training-log") + " to-tfrecord " + quote(out + "/rollouts") + " --output=" + quote(record));
  EXPECT_NE(readFile(record).find("rollout_native_size"), std::string::npos);
  // The Python package reads the same columns.
  if (HavePythonPackage) {
    CommandResult py = run("env PYTHONPATH=" + quote(PythonPackageDir) + " " + quote(PackagePython3) +
                           " -c 'import sys, mlgo_corpus\n"
                           "log = mlgo_corpus.Harvest(sys.argv[1])[\"m1.o\"].read_rollout_log()\n"
                           "print(list(log.features[\"rollout_native_size\"].reshape(-1)[:3]))' " +
                           quote(out));
    ASSERT_EQ(py.ExitCode, 0) << py.Err;
    std::string expected = "[";
    for (size_t i = 1; i <= 3; ++i)
      expected += (i > 1 ? ", " : "") + std::to_string(byModule["m1.o"][i]["native_size"].get<int64_t>());
    EXPECT_EQ(py.Out, expected + "]\n");
  }
  // Every rollout (not only the kept ones): a fresh replay of its decisions
  // gives its size.
  for (size_t i = 1; i <= 3; ++i) {
    std::string file = Work / ("rollout-" + std::to_string(i) + ".jsonl"),
                replayed = Work / ("replayed-" + std::to_string(i));
    std::string lines;
    for (const std::string &m : Modules)
      lines += nlohmann::json{{"module", m}, {"decisions", byModule[m][i]["decisions"]}}.dump() + "\n";
    writeFile(file, lines);
    mustRun(harvest(replayed, "--mode=plugin --policy=replay:" + quote(file)));
    auto fresh = journalByModule(replayed);
    for (const std::string &m : Modules)
      EXPECT_EQ(fresh[m]["native_size"], byModule[m][i]["native_size"]) << m << " rollout " << i;
  }
  expectKeptEqualsFreshReplay(out, "plugin");

  // Compiled whole instead of forked: the same table and rollout logs.
  std::string whole = Work / "whole";
  mustRun(harvest(whole, "--mode=plugin --explore=3 --explore_order=rollouts:first --explore_fork=false"));
  EXPECT_EQ(harvestSummary(whole)["explore"]["forked"], 0);
  EXPECT_EQ(readFile(whole + "/explore.jsonl"), readFile(out + "/explore.jsonl"));
  for (const std::string &m : Modules)
    EXPECT_TRUE(readFile(whole + "/rollouts/" + m + ".log") == readFile(out + "/rollouts/" + m + ".log")) << m;
}

// A forked rollout that crashes or hangs costs only itself: the round
// compiles it, and the table is the one compiling every rollout gives.
TEST_F(HarvestExplore, AForkedRolloutThatCrashesOrHangsIsCompiledInstead) {
  const std::string flags = "--mode=plugin --compile_server=on --explore=3 --explore_order=rollouts:first";
  std::string compiled = Work / "compiled";
  mustRun(harvest(compiled, flags + " --explore_fork=false"));
  for (const std::string fault : {"abort:2", "hang:1"}) {
    SCOPED_TRACE(fault);
    std::string forked = Work / ("forked-" + fault.substr(0, fault.find(':')));
    // hang: the base kills its rollout at --compilation_timeout, then goes on.
    std::string timeout = fault == "hang:1" ? " --compilation_timeout=10" : "";
    CommandResult r = run("MLGO_EXPLORE_CHAIN_FAULT=" + fault + " " + harvest(forked, flags + timeout));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    EXPECT_EQ(readFile(forked + "/explore.jsonl"), readFile(compiled + "/explore.jsonl"));
    // Every module's other two rollouts were forked.
    EXPECT_EQ(harvestSummary(forked)["explore"]["forked"], 2 * Modules.size());
  }
}

// rollouts:uncertain takes the base's least certain steps first (the
// earlier of equals), each flipped in the base, not down a chain.
TEST_F(HarvestExplore, UncertainRolloutsTakeTheBasesLeastCertainStepsFirst) {
  std::string out = Work / "out", sites = Work / "sites";
  CommandResult r = run(harvest(out, "--mode=plugin --explore=4 --explore_order=rollouts"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(harvestSummary(out)["explore"]["order"], "rollouts:uncertain");
  mustRun(harvest(sites, "--mode=plugin --decision_sites"));
  std::map<std::string, std::vector<nlohmann::json>> byModule;
  for (const nlohmann::json &t : jsonLines(out + "/explore.jsonl"))
    byModule[t["module"]].push_back(t);
  for (const std::string &m : Modules) {
    std::vector<double> certainty = marginCertainty(sites + "/logs/" + m + ".sites.jsonl");
    std::vector<size_t> order(certainty.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return certainty[a] != certainty[b] ? certainty[a] < certainty[b] : a < b; });
    const auto &ts = byModule[m];
    ASSERT_EQ(ts.size(), std::min<size_t>(5, certainty.size() + 1)) << m;
    for (size_t i = 1; i < ts.size(); ++i)
      EXPECT_EQ(ts[i]["flipped_step"], order[i - 1]) << m << " rollout " << i;
  }
}

// A K past a module's decisions rolls out every one of them, and no more.
TEST_F(HarvestExplore, RolloutsOfEveryDecisionOfAModule) {
  std::string corpus = makeNestedHarvestCorpus(Work / "small", "corpus"), out = Work / "out";
  CommandResult r =
      run(harvestCommand(corpus, out, "--num_workers=2 --mode=plugin --explore=100000 --explore_order=rollouts:first"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  std::map<std::string, std::vector<nlohmann::json>> byModule;
  for (const nlohmann::json &t : jsonLines(out + "/explore.jsonl"))
    byModule[t["module"]].push_back(t);
  ASSERT_FALSE(byModule.empty());
  for (const auto &[m, ts] : byModule) {
    size_t decisions = ts[0]["decisions"].size();
    ASSERT_EQ(ts.size(), decisions + 1) << m;
    for (size_t i = 1; i < ts.size(); ++i)
      EXPECT_EQ(ts[i]["flipped_step"], i - 1) << m;
    uint64_t kept = 0;
    for (const nlohmann::json &t : ts)
      if (t["kept"])
        kept = t["native_size"];
    EXPECT_LE(kept, ts[0]["native_size"].get<uint64_t>()) << m << ": never larger than the base";
  }
}

// search:ORDER: sweeps of rollouts, each from the best trajectory so far.
// Every trajectory replays its parent up to its flip; a parent after the
// base is smaller than its own parent; the kept one is the smallest, never
// larger than the base, and what a fresh replay gives; an interrupted
// search resumes to the same result.
TEST_F(HarvestExplore, TheSearchKeepsOnlyImprovementsAndResumesToTheSameResult) {
  std::string corpus = makeEmbeddedBitcodeCorpus(
      Work / "search", {{"s1", inlinerSource(4, 5)}, {"s2", inlinerSource(6, 4)}}, "-Oz", ObjectListing::Directory);
  const std::string flags =
      "--num_workers=2 --mode=plugin --policy=random:0.5:3 --explore=300 --explore_order=search:first";
  std::string out = Work / "out";
  CommandResult r = run(harvestCommand(corpus, out, flags));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  checkSchema("explore_trajectory.schema.json", out + "/explore.jsonl", true);
  EXPECT_EQ(harvestSummary(out)["explore"]["order"], "search:first");
  std::map<std::string, std::vector<nlohmann::json>> byModule;
  for (const nlohmann::json &t : jsonLines(out + "/explore.jsonl"))
    byModule[t["module"]].push_back(t);
  ASSERT_EQ(byModule.size(), 2u);
  size_t laterSweeps = 0;
  std::string keptLines;
  for (const auto &[m, ts] : byModule) {
    EXPECT_TRUE(ts[0]["parent"].is_null()) << m;
    size_t keptAt = 0;
    for (size_t i = 1; i < ts.size(); ++i) {
      ASSERT_EQ(ts[i]["status"], "ok") << ts[i].dump();
      size_t parent = ts[i]["parent"], step = ts[i]["flipped_step"];
      ASSERT_LT(parent, i) << m;
      const nlohmann::json &mine = ts[i]["decisions"], &theirs = ts[parent]["decisions"];
      ASSERT_LT(step, theirs.size()) << m;
      for (size_t s = 0; s < step; ++s)
        EXPECT_EQ(mine[s], theirs[s]) << m << " trajectory " << i << " step " << s;
      EXPECT_NE(mine[step], theirs[step]) << m << " trajectory " << i;
      if (parent != 0) {
        ++laterSweeps;
        // Only an improvement becomes a parent.
        EXPECT_LT(ts[parent]["native_size"].get<uint64_t>(),
                  ts[ts[parent]["parent"].get<size_t>()]["native_size"].get<uint64_t>())
            << m << " trajectory " << parent;
      }
      if (ts[i]["native_size"].get<uint64_t>() < ts[keptAt]["native_size"].get<uint64_t>())
        keptAt = i;
    }
    for (size_t i = 0; i < ts.size(); ++i)
      EXPECT_EQ(ts[i]["kept"], i == keptAt) << m << " trajectory " << i;
    EXPECT_LE(ts[keptAt]["native_size"].get<uint64_t>(), ts[0]["native_size"].get<uint64_t>()) << m;
    keptLines += nlohmann::json{{"module", m}, {"decisions", ts[keptAt]["decisions"]}}.dump() + "\n";
    EXPECT_LE(ts.size(), 301u) << m << ": K is the budget";
  }
  EXPECT_GT(laterSweeps, 0u) << "a sweep found a smaller trajectory, and the search went on from it";
  // The kept trajectories are what a fresh replay of their decisions gives.
  writeFile(Work / "kept.jsonl", keptLines);
  std::string replayed = Work / "replayed";
  mustRun(
      harvestCommand(corpus, replayed, "--num_workers=2 --mode=plugin --policy=replay:" + quote(Work / "kept.jsonl")));
  auto fresh = journalByModule(replayed);
  for (const auto &[m, ts] : byModule)
    for (const nlohmann::json &t : ts)
      if (t["kept"]) {
        EXPECT_EQ(fresh[m]["native_size"], t["native_size"]) << m;
        EXPECT_TRUE(readFile(out + "/logs/" + m + ".log") == readFile(replayed + "/logs/" + m + ".log")) << m;
      }

  // Interrupted in its third round (as Ctrl-C would), then run again.
  std::string marks = Work / "marks", again = Work / "again";
  fs::create_directories(marks);
  std::string opt = interruptingOpt(Work / "opt-interrupting", marks, 3);
  const std::string interrupted =
      flags + " --compile_server=off --opt_path=" + quote(opt) + " --compiler_writable_dir=" + quote(marks);
  CommandResult first = run(harvestCommand(corpus, again, interrupted));
  ASSERT_EQ(first.ExitCode, 130) << first.Err;
  CommandResult resumed = run(harvestCommand(corpus, again, interrupted));
  ASSERT_EQ(resumed.ExitCode, 0) << resumed.Err;
  EXPECT_EQ(readFile(again + "/explore.jsonl"), readFile(out + "/explore.jsonl"));
}

} // namespace
