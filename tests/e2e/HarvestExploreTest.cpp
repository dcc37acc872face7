// harvest-logs --explore=K: K=0 is the plain harvest byte for byte; every
// kept trajectory is what a fresh --policy=replay: harvest of its decisions
// gives (log bytes and native size); exploring is deterministic for a seed;
// a trajectory that fails is recorded and costs only itself.
#include "support/ExploreFixture.h"
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/PythonPackage.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>
#include <sys/stat.h>
#include <thread>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

TEST_F(HarvestExplore, ZeroIsThePlainHarvestByteForByte) {
  std::string plain = Work / "plain", zero = Work / "zero";
  mustRun(harvest(plain, "--mode=plugin --policy=random:0.5:2"));
  mustRun(harvest(zero, "--mode=plugin --policy=random:0.5:2 --explore=0"));
  // Records are appended as modules finish, in no fixed order.
  auto sorted = [](std::vector<nlohmann::json> records) {
    std::sort(records.begin(), records.end(),
              [](const nlohmann::json &a, const nlohmann::json &b) { return a.dump() < b.dump(); });
    return records;
  };
  EXPECT_EQ(sorted(harvestJournalWithoutSeconds(plain)), sorted(harvestJournalWithoutSeconds(zero)));
  for (const std::string &m : Modules)
    EXPECT_TRUE(readFile(plain + "/logs/" + m + ".log") == readFile(zero + "/logs/" + m + ".log")) << m;
  EXPECT_FALSE(fs::exists(zero + "/explore.jsonl"));
  EXPECT_FALSE(fs::exists(zero + "/explore"));
  EXPECT_FALSE(harvestSummary(zero).contains("explore"));
  // An order (a search's, say) with no budget is refused, not ignored; so is
  // a malformed one.
  for (const char *flags : {"--explore=0 --explore_order=search:first", "--explore_order=rollouts",
                            "--explore=3 --explore_order=search:", "--explore=3 --explore_order=search:sideways"}) {
    CommandResult refused = run(harvest(Work / "refused", std::string("--mode=plugin ") + flags));
    EXPECT_EQ(refused.ExitCode, 2) << flags << refused.Err;
    EXPECT_NE(refused.Err.find("--explore"), std::string::npos) << refused.Err;
    EXPECT_FALSE(fs::exists(Work / "refused/harvest.jsonl")) << flags;
  }
}

TEST_F(HarvestExplore, EveryKeptTrajectoryEqualsAFreshReplayOfIt) {
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--mode=plugin --policy=random:0.5:11 --explore=3 --explore_order=first"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  checkSchema("explore_trajectory.schema.json", out + "/explore.jsonl", true);
  checkSchema("harvest_summary.schema.json", out + "/summary.json", false);
  // The chain: base, then three flips, each after the previous one.
  std::map<std::string, std::vector<nlohmann::json>> byModule;
  for (const nlohmann::json &t : jsonLines(out + "/explore.jsonl"))
    byModule[t["module"]].push_back(t);
  uint64_t base = 0, kept = 0;
  size_t improved = 0;
  for (const std::string &m : Modules) {
    const auto &ts = byModule[m];
    ASSERT_EQ(ts.size(), 4u) << m;
    EXPECT_TRUE(ts[0]["flipped_step"].is_null());
    EXPECT_TRUE(ts[0]["flipped_site"].is_null());
    uint64_t smallest = ts[0]["native_size"];
    size_t keptAt = 0;
    for (size_t i = 1; i < ts.size(); ++i) {
      ASSERT_EQ(ts[i]["status"], "ok") << ts[i].dump();
      EXPECT_EQ(ts[i]["flipped_step"], i - 1) << m << ": --explore_order=first flips the next step";
      // It replays its parent (the previous, all ok here) up to the flip, and flips it.
      const auto &parent = ts[i - 1]["decisions"], &child = ts[i]["decisions"];
      for (size_t s = 0; s + 1 < i; ++s)
        EXPECT_EQ(child[s], parent[s]) << m;
      EXPECT_NE(child[i - 1], parent[i - 1]) << m;
      // The flipped call site is the one the round's sites file names at
      // that step, with the flipped decision; the parent asked about the
      // same call there (its round's file; the base's is in logs/ when kept).
      auto sitesOf = [&](size_t t) {
        return jsonLines(t == 0 ? out + "/logs/" + m + ".sites.jsonl"
                                : out + "/explore/round-" + std::to_string(t) + "/logs/" + m + ".sites.jsonl");
      };
      std::vector<nlohmann::json> mine = sitesOf(i);
      ASSERT_EQ(mine.size(), child.size()) << m;
      nlohmann::json named = mine[i - 1];
      EXPECT_EQ(named["decision"], child[i - 1].get<int>() == 1) << m;
      for (const char *key : {"caller", "callee", "site", "loc"})
        EXPECT_EQ(ts[i]["flipped_site"][key], named[key]) << m << " trajectory " << i << " " << key;
      if (i > 1 || ts[0]["kept"])
        EXPECT_EQ(sitesOf(i - 1)[i - 1]["caller"], named["caller"]) << m << " trajectory " << i;
      if (ts[i]["native_size"].get<uint64_t>() < smallest)
        smallest = ts[i]["native_size"], keptAt = i;
    }
    for (size_t i = 0; i < ts.size(); ++i)
      EXPECT_EQ(ts[i]["kept"], i == keptAt) << m << " trajectory " << i << ": the smallest is kept, ties to the base";
    base += ts[0]["native_size"].get<uint64_t>();
    kept += smallest;
    improved += keptAt != 0;
  }
  nlohmann::json s = harvestSummary(out)["explore"];
  EXPECT_EQ(s["base_total_size"], base);
  EXPECT_EQ(s["kept_total_size"], kept);
  EXPECT_EQ(s["improved"], improved);
  // On this corpus some flip wins, so a kept log and journal record are copied in.
  EXPECT_GT(improved, 0u);
  EXPECT_EQ(s["explored"], 12);
  EXPECT_EQ(s["failed"], 0);
  // The base harvest computed each module's default size once; no round compiles one.
  EXPECT_EQ(harvestSummary(out)["baselines"]["computed"], Modules.size());
  for (int round = 1; round <= 3; ++round)
    EXPECT_EQ(harvestSummary(out + "/explore/round-" + std::to_string(round))["baselines"]["computed"], 0) << round;
  // Replayed in both modes: the kept logs are what a compile of their decisions logs.
  expectKeptEqualsFreshReplay(out, "plugin");
  expectKeptEqualsFreshReplay(out, "interactive");
}

TEST_F(HarvestExplore, IsDeterministicForASeed) {
  std::string a = Work / "a", b = Work / "b", c = Work / "c";
  const std::string flags = "--mode=interactive --policy=random:0.5:11 --explore=2 --explore_order=random:9";
  mustRun(harvest(a, flags));
  mustRun(harvest(b, flags));
  mustRun(harvest(c, "--mode=interactive --policy=random:0.5:11 --explore=2 --explore_order=random:10"));
  EXPECT_EQ(readFile(a + "/explore.jsonl"), readFile(b + "/explore.jsonl"));
  EXPECT_NE(readFile(a + "/explore.jsonl"), readFile(c + "/explore.jsonl")) << "the seed chooses the steps";
  for (const std::string &m : Modules)
    EXPECT_TRUE(readFile(a + "/logs/" + m + ".log") == readFile(b + "/logs/" + m + ".log")) << m;
  expectKeptEqualsFreshReplay(a, "interactive");
}

// m2.o's first exploration fails (its compiler exits 1 once): recorded, and
// its second exploration chains from the base instead; nothing else moves.
TEST_F(HarvestExplore, AFailedTrajectoryIsRecordedAndCostsOnlyItself) {
  std::string marks = Work / "marks";
  fs::create_directories(marks);
  std::string opt = writeScript(Work / "opt-failing-once",
                                "#!/bin/bash\n"
                                "for a in \"$@\"; do case \"$a\" in -mlgo-inliner-policy=replay:*) "
                                "f=${a#-mlgo-inliner-policy=replay:};; esac; done\n"
                                "if [ -n \"$f\" ] && grep -q '\"module\":\"m2.o\"' \"$f\" && [ ! -e " +
                                    quote(marks + "/failed") + " ]; then touch " + quote(marks + "/failed") +
                                    "; echo 'injected failure' >&2; exit 1; fi\n"
                                    "exec opt-22 \"$@\"\n");
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--mode=plugin --explore=2 --explore_order=first --opt_path=" + quote(opt) +
                                         " --compiler_writable_dir=" + quote(marks)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  std::map<std::string, std::vector<nlohmann::json>> byModule;
  for (const nlohmann::json &t : jsonLines(out + "/explore.jsonl"))
    byModule[t["module"]].push_back(t);
  const auto &m2 = byModule["m2.o"];
  ASSERT_EQ(m2.size(), 3u);
  EXPECT_EQ(m2[1]["status"], "failed") << m2[1].dump();
  EXPECT_EQ(m2[1]["reason"], "compiler_failed") << m2[1].dump();
  EXPECT_TRUE(m2[1]["decisions"].is_null());
  EXPECT_TRUE(m2[1]["native_size"].is_null());
  EXPECT_FALSE(m2[1]["kept"]);
  EXPECT_EQ(m2[2]["status"], "ok") << m2[2].dump();
  EXPECT_EQ(m2[2]["flipped_step"], 1);
  EXPECT_EQ(m2[2]["decisions"][0], m2[0]["decisions"][0]) << "the failed trajectory is no parent";
  EXPECT_NE(m2[2]["decisions"][1], m2[0]["decisions"][1]);
  for (const std::string &m : {"m1.o", "m3.o", "m4.o"})
    for (const nlohmann::json &t : byModule[m])
      EXPECT_EQ(t["status"], "ok") << m << t.dump();
  EXPECT_EQ(harvestSummary(out)["explore"]["failed"], 1);
  expectKeptEqualsFreshReplay(out, "plugin");
}

// How sure the policy was at each step: |cost_margin| of a sites file
// (null: certain), or |yes - no| of a log's inlining_logits.
// Each exploration flips the step its parent's policy was least sure of,
// after the previous flip; `certaintyOf(dir, module)` reads a trajectory's
// certainty from the harvest it was taken in (the base's from `base`).
void expectUncertainChain(
    const std::string &out, const std::string &base,
    const std::function<std::vector<double>(const std::string &, const std::string &)> &certaintyOf) {
  std::map<std::string, std::vector<nlohmann::json>> byModule;
  for (const nlohmann::json &t : jsonLines(out + "/explore.jsonl"))
    byModule[t["module"]].push_back(t);
  size_t explored = 0;
  for (const std::string &m : Modules) {
    const auto &ts = byModule[m];
    ASSERT_FALSE(ts.empty()) << m;
    for (size_t i = 1; i < ts.size(); ++i) {
      ASSERT_EQ(ts[i]["status"], "ok") << ts[i].dump();
      std::string parentDir = i == 1 ? base : out + "/explore/round-" + std::to_string(i - 1);
      std::vector<double> certainty = certaintyOf(parentDir, m);
      ASSERT_EQ(certainty.size(), ts[i - 1]["decisions"].size()) << m << " trajectory " << i - 1;
      size_t from = i == 1 ? 0 : ts[i - 1]["flipped_step"].get<size_t>() + 1;
      EXPECT_EQ(ts[i]["flipped_step"], leastSure(certainty, from)) << m << " trajectory " << i;
      ++explored;
    }
  }
  EXPECT_GT(explored, 0u);
}

// The default heuristic's certainty is its threshold minus its inline cost,
// which the plugin reports in the sites files; the default order flips the
// smallest |margin| first.
TEST_F(HarvestExplore, UncertainFlipsWhereTheDefaultHeuristicWasLeastSure) {
  std::string out = Work / "out", sites = Work / "sites";
  CommandResult r = run(harvest(out, "--mode=plugin --explore=3"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(harvestSummary(out)["explore"]["order"], "uncertain");
  // The default base's sizes are the baselines: stored, so no round compiles one.
  EXPECT_EQ(harvestSummary(out)["baselines"]["stored"], Modules.size());
  EXPECT_EQ(harvestSummary(out + "/explore/round-1")["baselines"]["computed"], 0);
  // The base harvest's sites, as a plain harvest writes them (the base's own
  // are replaced by the kept trajectory's where a flip won).
  mustRun(harvest(sites, "--mode=plugin --decision_sites"));
  size_t margins = 0;
  for (const std::string &m : Modules) {
    checkSchema("decision_sites.schema.json", sites + "/logs/" + m + ".sites.jsonl", true);
    for (const nlohmann::json &site : jsonLines(sites + "/logs/" + m + ".sites.jsonl")) {
      if (site["cost_margin"].is_null())
        continue;
      ++margins;
      // Not below the threshold: never inlined (deferral only turns a yes into a no).
      if (site["cost_margin"].get<int64_t>() <= 0)
        EXPECT_FALSE(site["default"]) << m << site.dump();
    }
  }
  EXPECT_GT(margins, 0u);
  expectUncertainChain(out, sites, [](const std::string &dir, const std::string &m) {
    return marginCertainty(dir + "/logs/" + m + ".sites.jsonl");
  });
  expectKeptEqualsFreshReplay(out, "plugin");
}

// A tflite: base policy's certainty is the gap between its logits; its
// explorations continue with the model, in both hosts.
TEST_F(HarvestExplore, UncertainFollowsATFLitePolicysLogits) {
  std::string features = Work / "features.json", model = Work / "model", plain = Work / "plain";
  mustRun(harvest(plain, "--mode=plugin"));
  auto first = readObservations(plain + "/logs/m1.o.log");
  ASSERT_FALSE(first.empty());
  // The compiler's features as a log header lists them, for the model writer.
  nlohmann::json header;
  header["features"] = nlohmann::json::array();
  for (const auto &[name, values] : first[0].Features)
    if (name != "inlining_decision")
      header["features"].push_back({{"name", name}, {"type", "int64_t"}, {"shape", {1}}});
  writeFile(features, header.dump());
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/tflite_models.py") + " inliner " +
          quote(features) + " " + quote(model) + " --seed 3");
  for (const std::string mode : {"plugin", "interactive"}) {
    std::string out = Work / ("out-" + mode);
    CommandResult r =
        run(harvest(out, "--mode=" + mode + " --compile_server=on --policy=tflite:" + quote(model) + " --explore=2"));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    // The plugin forks its explorations where the model's logits were closest.
    nlohmann::json explore = harvestSummary(out)["explore"];
    EXPECT_EQ(explore["forked"], mode == "plugin" ? explore["explored"] : nlohmann::json(0)) << explore.dump();
    // The base harvest's logs, as a plain harvest with the model writes them.
    std::string base = Work / ("base-" + mode);
    mustRun(harvest(base, "--mode=" + mode + " --policy=tflite:" + quote(model)));
    expectUncertainChain(out, base, [](const std::string &dir, const std::string &m) {
      return logitCertainty(dir + "/logs/" + m + ".log");
    });
  }
}

TEST_F(HarvestExplore, UncertainRefusesAPolicyWithoutCertainty) {
  CommandResult random = run(harvest(Work / "r", "--mode=plugin --policy=random:0.5:1 --explore=2"));
  EXPECT_EQ(random.ExitCode, 2);
  EXPECT_NE(random.Err.find("random:P has none"), std::string::npos) << random.Err;
  CommandResult interactive = run(harvest(Work / "i", "--mode=interactive --explore=2"));
  EXPECT_EQ(interactive.ExitCode, 2);
  EXPECT_NE(interactive.Err.find("only the plugin reports"), std::string::npos) << interactive.Err;
  EXPECT_FALSE(fs::exists(Work / "r/harvest.jsonl"));
}

// For ml-compiler-opt's trainer: --tfrecord holds the kept trajectories in
// its imitation-learning format, and OUT/profile_{max,pol}.json its profiles
// (tests/python/check_imitation.py checks them against what it declares).
TEST_F(HarvestExplore, WritesMlCompilerOptsTrajectoriesAndProfiles) {
  if (!HavePythonPackage)
    GTEST_SKIP() << "the Python package is not built";
  std::string out = Work / "out", tfrecord = Work / "trajectories.tfrecord";
  CommandResult r = run(harvest(out, "--mode=plugin --explore=2 --explore_order=first --tfrecord=" + quote(tfrecord)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  checkSchema("harvest_summary.schema.json", out + "/summary.json", false);
  checkSchema("imitation_profile.schema.json", out + "/profile_max.json", false);
  checkSchema("imitation_profile.schema.json", out + "/profile_pol.json", false);
  nlohmann::json s = harvestSummary(out)["explore"];
  EXPECT_EQ(s["trajectory_tfrecord"]["path"], tfrecord);
  EXPECT_GT(s["trajectory_tfrecord"]["records"].get<int>(), 0);
  CommandResult check = run("env PYTHONPATH=" + quote(PythonPackageDir) + " " + quote(PackagePython3) + " " +
                            quote(std::string(MLGO_SOURCE_DIR) + "/tests/python/check_imitation.py") + " " +
                            quote(out) + " " + quote(tfrecord));
  EXPECT_EQ(check.ExitCode, 0) << check.Out << check.Err;
  EXPECT_EQ(check.Out, "ok\n") << check.Err;
}

// An exploration interrupted in round 2 resumes: the rerun recompiles
// none of round 1's replays (their trajectories are the same), finishes
// round 2, and keeps what an uninterrupted run keeps.
TEST_F(HarvestExplore, AnInterruptedExplorationResumesItsRounds) {
  std::string marks = Work / "marks";
  fs::create_directories(marks);
  // The first round-2 compile interrupts the harvest (as Ctrl-C would).
  std::string opt = interruptingOpt(Work / "opt-interrupting", marks, 2);
  std::string out = Work / "out", plain = Work / "plain";
  std::string flags = "--mode=plugin --explore=2 --explore_order=first --compile_server=off --opt_path=" + quote(opt) +
                      " --compiler_writable_dir=" + quote(marks);
  CommandResult first = run(harvest(out, flags));
  ASSERT_EQ(first.ExitCode, 130) << first.Err;
  ASSERT_TRUE(fs::exists(marks + "/interrupted"));
  EXPECT_FALSE(fs::exists(out + "/explore.jsonl"));
  CommandResult again = run(harvest(out, flags));
  ASSERT_EQ(again.ExitCode, 0) << again.Err;
  EXPECT_NE(again.Err.find("round 1: 4 trajectories (resumed"), std::string::npos) << again.Err;
  nlohmann::json round1 = harvestSummary(out + "/explore/round-1");
  EXPECT_EQ(round1["modules"]["skipped_done"], 4) << round1.dump();
  mustRun(harvest(plain, "--mode=plugin --explore=2 --explore_order=first"));
  EXPECT_EQ(readFile(out + "/explore.jsonl"), readFile(plain + "/explore.jsonl"));
  for (const std::string &m : Modules)
    EXPECT_TRUE(readFile(out + "/logs/" + m + ".log") == readFile(plain + "/logs/" + m + ".log")) << m;
}

} // namespace

// --policies with --explore: each policy is a base policy, explored in its
// own directory exactly as a harvest of that policy alone explores it; the
// evaluation counts the kept trajectories; a rerun explores nothing again.
TEST_F(HarvestExplore, EveryPolicyOfABatchIsExploredAsItWouldBeAlone) {
  const std::string flags = "--mode=plugin --explore=2 --explore_order=first";
  const std::vector<std::string> specs = {"default", "random:0.5:11"};
  std::string batch = Work / "batch";
  CommandResult r = run(harvest(batch, flags + " --policies=" + specs[0] + "," + specs[1]));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  checkSchema("evaluation_summary.schema.json", batch + "/evaluation.json", false);
  nlohmann::json evaluation = nlohmann::json::parse(readFile(batch + "/evaluation.json"));
  for (size_t k = 0; k < specs.size(); ++k) {
    std::string alone = Work / ("alone-" + std::to_string(k)), dir = batch + "/policies/" + std::to_string(k);
    mustRun(harvest(alone, flags + " --policy=" + specs[k]));
    EXPECT_EQ(readFile(dir + "/explore.jsonl"), readFile(alone + "/explore.jsonl")) << specs[k];
    for (const std::string &m : Modules)
      EXPECT_TRUE(readFile(dir + "/logs/" + m + ".log") == readFile(alone + "/logs/" + m + ".log")) << specs[k] << m;
    nlohmann::json explored = harvestSummary(alone)["explore"], total = evaluation["policies"][k];
    EXPECT_EQ(total["explore"]["kept_total_size"], explored["kept_total_size"]) << total.dump();
    EXPECT_EQ(total["explore"]["base_total_size"], explored["base_total_size"]) << total.dump();
    // The policy's cells are its kept trajectories.
    EXPECT_EQ(total["native_size"], explored["kept_total_size"]) << total.dump();
  }
  // Run again: both explorations stand, nothing is compiled.
  std::string before = readFile(batch + "/policies/1/explore.jsonl");
  CommandResult again = run(harvest(batch, flags + " --policies=" + specs[0] + "," + specs[1]));
  ASSERT_EQ(again.ExitCode, 0) << again.Err;
  EXPECT_EQ(again.Err.find("--explore: round"), std::string::npos) << again.Err;
  EXPECT_EQ(readFile(batch + "/policies/1/explore.jsonl"), before);
  nlohmann::json rerun = nlohmann::json::parse(readFile(batch + "/evaluation.json"));
  EXPECT_EQ(rerun["policies"], evaluation["policies"]);
  EXPECT_EQ(rerun["baselines"]["computed"], 0) << rerun.dump();
}

// --explore_fork: the base compiles fork each explored trajectory at its
// flipped decision (src/plugin/ExplorationChain.h) and the rounds take
// them; what comes out is what compiling every trajectory whole gives.
void expectSameExploration(const std::string &forked, const std::string &compiled) {
  EXPECT_EQ(readFile(forked + "/explore.jsonl"), readFile(compiled + "/explore.jsonl"));
  for (const std::string &m : Modules) {
    EXPECT_TRUE(readFile(forked + "/logs/" + m + ".log") == readFile(compiled + "/logs/" + m + ".log")) << m;
    if (fs::exists(compiled + "/logs/" + m + ".sites.jsonl"))
      EXPECT_EQ(readFile(forked + "/logs/" + m + ".sites.jsonl"), readFile(compiled + "/logs/" + m + ".sites.jsonl"))
          << m;
  }
  auto a = journalByModule(forked), b = journalByModule(compiled);
  for (const std::string &m : Modules) {
    a[m].erase("seconds"), b[m].erase("seconds");
    EXPECT_EQ(a[m], b[m]) << m << ": the journal describes the same kept trajectory";
  }
  nlohmann::json x = harvestSummary(forked)["explore"], y = harvestSummary(compiled)["explore"];
  x.erase("forked"), y.erase("forked"), x.erase("profiles"), y.erase("profiles");
  EXPECT_EQ(x, y);
  EXPECT_EQ(harvestSummary(compiled)["explore"]["forked"], 0);
  EXPECT_FALSE(fs::exists(forked + "/explore/chains")) << "the chains are removed once the rounds took them";
}

TEST_F(HarvestExplore, ForkedTrajectoriesAreTheOnesCompilingThemGives) {
  for (const std::string flags : {"--policy=default --explore=3", // least |cost margin|
                                  "--policy=random:0.5:11 --explore=3 --explore_order=first"}) {
    SCOPED_TRACE(flags);
    std::string forked = Work / "forked", compiled = Work / "compiled";
    fs::remove_all(forked), fs::remove_all(compiled);
    CommandResult r = run(harvest(forked, "--mode=plugin --compile_server=on " + flags));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    mustRun(harvest(compiled, "--mode=plugin --compile_server=on --explore_fork=false " + flags));
    nlohmann::json explore = harvestSummary(forked)["explore"];
    EXPECT_GT(explore["explored"], 0);
    EXPECT_EQ(explore["forked"], explore["explored"]) << "every explored trajectory was forked";
    for (int round = 1; round <= 3; ++round)
      EXPECT_EQ(harvestSummary(forked + "/explore/round-" + std::to_string(round))["adopted_from_chains"],
                harvestSummary(forked + "/explore/round-" + std::to_string(round))["modules"]["ok"]);
    expectSameExploration(forked, compiled);
    expectKeptEqualsFreshReplay(forked, "plugin");
  }
}

// Module names nest (`x` and `x/t1`, a directory of the corpus beside its
// file) the way a chain's trajectory directories do: each module's chain is
// kept apart (a hashed name), so neither takes or removes the other's, and
// every trajectory of both is still forked.
TEST_F(HarvestExplore, NestedModuleNamesKeepTheirChainsApart) {
  std::string nested = Work / "nested";
  fs::create_directories(nested + "/x");
  for (const std::string name : {"x", "x/t1", "x/t2"}) {
    fs::copy_file(corpus() + "/m3.o.bc", nested + "/" + name + ".bc");
    fs::copy_file(corpus() + "/m3.o.cmd", nested + "/" + name + ".cmd");
  }
  nlohmann::json description = nlohmann::json::parse(readFile(corpus() + "/corpus_description.json"));
  description["modules"] = {"x", "x/t1", "x/t2"};
  writeFile(nested + "/corpus_description.json", description.dump());
  const std::string flags = " --num_workers=2 --mode=plugin --compile_server=on --explore=3";
  std::string forked = Work / "forked", compiled = Work / "compiled";
  CommandResult r = run(harvestCommand(nested, forked, flags));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  mustRun(harvestCommand(nested, compiled, flags + " --explore_fork=false"));
  nlohmann::json explore = harvestSummary(forked)["explore"];
  EXPECT_EQ(explore["explored"], 9) << explore.dump();
  EXPECT_EQ(explore["forked"], explore["explored"]) << "a module's chain was taken or removed by another's";
  EXPECT_EQ(readFile(forked + "/explore.jsonl"), readFile(compiled + "/explore.jsonl"));
}

// --explore_fork=false compiles every trajectory: a rerun of a forking run
// that stopped before its rounds (here: round 1's file cannot be written)
// takes none of the chains that run left.
TEST_F(HarvestExplore, WithoutForkingNoLeftChainIsTaken) {
  const std::string flags = "--mode=plugin --compile_server=on --explore=2";
  std::string out = Work / "out", compiled = Work / "compiled";
  fs::create_directories(out + "/explore/round-1.jsonl"); // a directory: the rounds cannot start
  CommandResult stopped = run(harvest(out, flags));
  ASSERT_NE(stopped.ExitCode, 0) << stopped.Err;
  ASSERT_FALSE(fs::is_empty(out + "/explore/chains")) << "the base compiles left their chains";
  fs::remove(out + "/explore/round-1.jsonl");
  CommandResult again = run(harvest(out, flags + " --explore_fork=false"));
  ASSERT_EQ(again.ExitCode, 0) << again.Err;
  EXPECT_EQ(harvestSummary(out)["explore"]["forked"], 0);
  for (int round = 1; round <= 2; ++round)
    EXPECT_EQ(harvestSummary(out + "/explore/round-" + std::to_string(round)).value("adopted_from_chains", 0), 0)
        << round;
  mustRun(harvest(compiled, flags + " --explore_fork=false"));
  EXPECT_EQ(readFile(out + "/explore.jsonl"), readFile(compiled + "/explore.jsonl"));
}

// A chain's trajectory whose object is not one (here a 64 GiB hole, which
// taking it must not copy out) or whose sites file misses a site is
// compiled by its round, not recorded as failed; the others are taken.
TEST_F(HarvestExplore, AChainTrajectoryWithABadObjectOrSitesIsCompiledInstead) {
  const std::string flags = "--mode=plugin --compile_server=on --explore=2";
  std::string out = Work / "out", compiled = Work / "compiled";
  mustRun(harvest(compiled, flags + " --explore_fork=false"));
  std::map<size_t, size_t> atIndex;
  for (const nlohmann::json &t : jsonLines(compiled + "/explore.jsonl"))
    ++atIndex[t["trajectory"].get<size_t>()];
  ASSERT_GT(atIndex[2], 0u);
  fs::create_directories(out + "/explore/round-1.jsonl"); // stops the first run before its rounds
  ASSERT_NE(run(harvest(out, flags)).ExitCode, 0);
  size_t holes = 0, cut = 0;
  for (const fs::directory_entry &chain : fs::directory_iterator(out + "/explore/chains")) {
    if (fs::exists(chain.path() / "t1/native.o")) {
      fs::resize_file(chain.path() / "t1/native.o", 0);
      fs::resize_file(chain.path() / "t1/native.o", 64ull << 30);
      ++holes;
    }
    if (fs::exists(chain.path() / "t2/sites.jsonl")) {
      std::string sites = readFile(chain.path() / "t2/sites.jsonl");
      sites.pop_back();
      writeFile(chain.path() / "t2/sites.jsonl", sites.substr(0, sites.rfind('\n') + 1));
      ++cut;
    }
  }
  EXPECT_EQ(holes, atIndex[1]);
  EXPECT_EQ(cut, atIndex[2]);
  fs::remove(out + "/explore/round-1.jsonl");
  CommandResult r = run(harvest(out, flags));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("t1/native.o"), std::string::npos) << r.Err;
  EXPECT_NE(r.Err.find("t2/sites.jsonl does not hold one site per decision"), std::string::npos) << r.Err;
  EXPECT_EQ(harvestSummary(out)["explore"]["forked"], 0) << "every trajectory of these chains was refused";
  EXPECT_EQ(readFile(out + "/explore.jsonl"), readFile(compiled + "/explore.jsonl"));
  for (const std::string &m : Modules)
    EXPECT_TRUE(readFile(out + "/logs/" + m + ".log") == readFile(compiled + "/logs/" + m + ".log")) << m;
}

// A chain file put in place of the one the round checked, after the check
// (MLGO_EXPLORE_ADOPT_SWAP, a test seam: the next trajectory's file, which
// passes every check the round makes), is never what the round takes: it
// takes each file through the descriptor it checked, and that file, no
// longer linked anywhere, cannot be linked again, so the round compiles
// the trajectory instead.
TEST_F(HarvestExplore, AChainFileSwappedAfterItsCheckIsNotTaken) {
  const std::string flags = "--mode=plugin --compile_server=on --explore=2";
  std::string out = Work / "out", compiled = Work / "compiled";
  mustRun(harvest(compiled, flags + " --explore_fork=false"));
  size_t explored = 0, second = 0;
  for (const nlohmann::json &t : jsonLines(compiled + "/explore.jsonl")) {
    explored += t["trajectory"] != 0;
    second += t["trajectory"] == 2;
  }
  ASSERT_GT(second, 0u);
  CommandResult r = run("MLGO_EXPLORE_ADOPT_SWAP=1 " + harvest(out, flags));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  size_t swaps = 0;
  for (size_t at = r.Err.find("swapped after their check"); at != std::string::npos;
       at = r.Err.find("swapped after their check", at + 1))
    ++swaps;
  EXPECT_EQ(swaps, second) << r.Err;
  EXPECT_NE(r.Err.find("training.log into"), std::string::npos) << r.Err;
  EXPECT_EQ(harvestSummary(out)["explore"]["forked"], explored - second) << "the swapped ones were compiled";
  expectSameExploration(out, compiled);
}

// A forked trajectory that crashes or hangs (MLGO_EXPLORE_CHAIN_FAULT, a
// test seam) takes the ones after it in its chain along: the rounds compile
// those themselves, and the exploration comes out the same. One whose
// directory is a symbolic link is compiled too, never read through it.
TEST_F(HarvestExplore, AForkedTrajectoryThatCrashesOrHangsIsCompiledInstead) {
  const std::string flags = "--mode=plugin --compile_server=on --explore=3";
  std::string compiled = Work / "compiled";
  mustRun(harvest(compiled, flags + " --explore_fork=false"));
  std::map<size_t, size_t> atIndex; // explored trajectories by their index in the chain
  for (const nlohmann::json &t : jsonLines(compiled + "/explore.jsonl"))
    ++atIndex[t["trajectory"].get<size_t>()];
  ASSERT_GT(atIndex[2], 0u);
  for (const std::string fault : {"abort:2", "hang:1", "link:2", "die:1"}) {
    SCOPED_TRACE(fault);
    std::string forked = Work / ("forked-" + fault.substr(0, fault.find(':')));
    // hang: each chain's parent kills it at --compilation_timeout (short
    // here, yet long enough for a sanitized base compile on a busy machine:
    // the base's own compile is held to it too).
    std::string timeout = fault == "hang:1" ? " --compilation_timeout=10" : "";
    auto start = std::chrono::steady_clock::now();
    CommandResult r = run("MLGO_EXPLORE_CHAIN_FAULT=" + fault + " " +
                          harvest(forked, "--mode=plugin --compile_server=on --explore=3" + timeout));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    expectSameExploration(forked, compiled);
    if (fault == "link:2") // refused, and said so, naming the link
      EXPECT_NE(r.Err.find("of its fork chain is not taken (compiled instead)"), std::string::npos) << r.Err;
    // abort: the trajectories before the fault were forked; hang: none (the
    // first hangs); link: all but the one whose directory is a link, which
    // the round does not read through but compiles.
    // die: the first checkpoint is gone when resumed, which costs the chain, not the base.
    size_t expected = fault == "abort:2" ? atIndex[1] : fault == "link:2" ? atIndex[1] + atIndex[3] : 0;
    EXPECT_EQ(harvestSummary(forked)["explore"]["forked"], expected);
    if (fault == "hang:1") // killed at the timeout, not waited for at the run's end
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(150));
  }
}

// A forking base compile runs on past its own timeout (its chain follows
// it); one whose own compile took longer than --compilation_timeout is
// recorded as the timeout records it without forking.
TEST_F(HarvestExplore, AForkingBaseCompileKeepsItsOwnTimeout) {
  std::string forked = Work / "forked", hung = Work / "hung";
  const std::string flags = "--mode=plugin --compile_server=on --explore=2 --compilation_timeout=2";
  // slow:0: every base compile takes 2.5 s of its own.
  CommandResult r = run("MLGO_EXPLORE_CHAIN_FAULT=slow:0 " + harvest(forked, flags));
  // Without forking, a compile killed at its timeout.
  CommandResult h = run("MLGO_COMPILE_SERVER_FAULT=hang:-passes " + harvest(hung, flags + " --explore_fork=false"));
  EXPECT_EQ(r.ExitCode, h.ExitCode) << r.Err << h.Err;
  auto a = journalByModule(forked), b = journalByModule(hung);
  for (const std::string &m : Modules) {
    ASSERT_TRUE(a.count(m) && b.count(m)) << m;
    EXPECT_EQ(a[m]["status"], "timeout") << a[m].dump();
    for (const char *field : {"status", "reason", "detail", "exit_status"})
      EXPECT_EQ(a[m][field], b[m][field]) << m << " " << field;
  }
  EXPECT_FALSE(fs::exists(forked + "/explore/chains")) << "no chain is kept for a base that timed out";
}

TEST_F(HarvestExplore, ABatchWithAPolicyThatCannotBeExploredIsRefused) {
  CommandResult r = run(harvest(
      Work / "b", "--mode=plugin --explore=2 --explore_order=first --policies=default,replay:/nonexistent.jsonl"));
  EXPECT_EQ(r.ExitCode, 2) << r.Err;
  EXPECT_NE(r.Err.find("policy replay:/nonexistent.jsonl"), std::string::npos) << r.Err;
  EXPECT_FALSE(fs::exists(Work / "b/policies"));
  CommandResult tfrecord = run(
      harvest(Work / "t", "--mode=plugin --policies=default,random:0.5:1 --tfrecord=" + quote(Work / "t.tfrecord")));
  EXPECT_EQ(tfrecord.ExitCode, 2) << tfrecord.Err;
  EXPECT_NE(tfrecord.Err.find("--tfrecord with --policies"), std::string::npos) << tfrecord.Err;
}

// An exec: base policy (interactive mode): asked for its certainty
// (MLGO_POLICY_CERTAINTY=1), it sends a float64 after each decision, which
// the log keeps as policy_certainty; each flip is where it was least sure,
// the rounds continue with the policy's own answers, and a plain harvest
// does not ask. scripts/echo_default_policy.py's certainty is
// |node_count - 20.5| of the observation.
TEST_F(HarvestExplore, UncertainFollowsAnExecPolicysOwnCertainty) {
  std::string policy = "exec:/usr/bin/python3 " + std::string(MLGO_SOURCE_DIR) + "/scripts/echo_default_policy.py";
  std::string out = Work / "out", plain = Work / "plain";
  CommandResult r = run(harvest(out, "--mode=interactive --explore=3 --policy=" + quote(policy)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_GT(harvestSummary(out)["explore"]["explored"].get<int>(), 0);
  mustRun(harvest(plain, "--mode=interactive --policy=" + quote(policy)));
  for (const std::string &m : Modules) {
    auto observations = readObservations(plain + "/logs/" + m + ".log");
    ASSERT_FALSE(observations.empty()) << m;
    EXPECT_FALSE(observations.front().Features.count("policy_certainty")) << "a plain harvest does not ask for it";
  }
  size_t logged = 0;
  expectUncertainChain(out, plain, [&](const std::string &dir, const std::string &m) {
    std::vector<double> certainty;
    for (const LoggedObservation &o : readObservations(dir + "/logs/" + m + ".log")) {
      double expected = std::fabs(o.Features.at("node_count").at(0) - 20.5);
      if (dir != plain) { // a round's log holds what the policy sent
        EXPECT_DOUBLE_EQ(o.Features.at("policy_certainty").at(0), expected) << dir << " " << m;
        ++logged;
      }
      certainty.push_back(expected);
    }
    return certainty;
  });
  EXPECT_GT(logged, 0u);
  for (const nlohmann::json &t : jsonLines(out + "/explore.jsonl"))
    EXPECT_TRUE(t.at("flipped_site").is_null()) << "interactive mode names no call site: " << t.dump();
  // Without certainty the order must be given.
  CommandResult first =
      run(harvest(Work / "first", "--mode=interactive --explore=2 --explore_order=first --policy=" + quote(policy)));
  ASSERT_EQ(first.ExitCode, 0) << first.Err;
  EXPECT_EQ(harvestSummary(Work / "first")["explore"]["order"], "first");
}

// While a run explores, OUT is its own: a second run there is refused
// (it would append to the journal and replace kept logs beside the first).
TEST_F(HarvestExplore, ASecondRunWhileOneExploresIsRefused) {
  std::string marks = Work / "marks", out = Work / "out";
  fs::create_directories(marks);
  // Round 1's first compile waits until the second run has been tried.
  std::string opt =
      writeScript(Work / "opt-waiting", "#!/bin/bash\n"
                                        "for a in \"$@\"; do case \"$a\" in -mlgo-inliner-policy=replay:*round-1*) "
                                        "touch " +
                                            quote(marks + "/exploring") + "; for i in $(seq 100); do [ -e " +
                                            quote(marks + "/tried") + " ] && break; sleep 0.1; done;; esac; done\n" +
                                            "exec opt-22 \"$@\"\n");
  std::string flags = "--mode=plugin --explore=1 --explore_order=first --compile_server=off "
                      "--opt_path=" +
                      quote(opt) + " --compiler_writable_dir=" + quote(marks);
  CommandResult exploring;
  std::thread first([&] { exploring = run(harvest(out, flags)); });
  for (int i = 0; i < 300 && !fs::exists(marks + "/exploring"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  bool reached = fs::exists(marks + "/exploring");
  std::string summaryBefore = readFile(out + "/summary.json");
  CommandResult second = run(harvest(out, flags)); // the same command again
  // Refused before it touched OUT (its base harvest would rewrite the summary and compact the journal).
  std::string summaryAfter = readFile(out + "/summary.json");
  writeFile(marks + "/tried", "");
  first.join();
  ASSERT_TRUE(reached) << exploring.Err;
  ASSERT_EQ(exploring.ExitCode, 0) << exploring.Err;
  EXPECT_NE(second.ExitCode, 0) << second.Err;
  EXPECT_NE(second.Err.find("is in use by another run"), std::string::npos) << second.Err;
  EXPECT_EQ(summaryAfter, summaryBefore) << "the second run rewrote OUT/summary.json while the first explored";
  EXPECT_EQ(harvestSummary(out)["explore"]["explored"].get<int>() > 0, true);
}
