// harvest-logs --explore=K: K=0 is the plain harvest byte for byte; every
// kept trajectory is what a fresh --policy=replay: harvest of its decisions
// gives (log bytes and native size); exploring is deterministic for a seed;
// a trajectory that fails is recorded and costs only itself.
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

const std::vector<std::string> Modules = {"m1.o", "m2.o", "m3.o", "m4.o"};

std::vector<nlohmann::json> jsonLines(const std::string &path) {
  std::vector<nlohmann::json> lines;
  std::istringstream text(readFile(path));
  for (std::string line; std::getline(text, line);)
    if (!line.empty())
      lines.push_back(nlohmann::json::parse(line));
  return lines;
}

void checkSchema(const std::string &schema, const std::string &file, bool lines) {
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") +
          (lines ? " --lines " : " ") + quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/" + schema) + " " +
          quote(file));
}

// An opt that interrupts the harvest (SIGINT to it, as Ctrl-C would) at
// the first compile of round `round`'s replays, once (`marks`/interrupted),
// and is opt-22 otherwise.
std::string interruptingOpt(const std::string &path, const std::string &marks, int round) {
  return writeScript(path, "#!/bin/bash\n"
                           "for a in \"$@\"; do case \"$a\" in -mlgo-inliner-policy=replay:*round-" +
                               std::to_string(round) + "*) if [ ! -e " + quote(marks + "/interrupted") +
                               " ]; then touch " + quote(marks + "/interrupted") +
                               "; kill -INT $PPID; exit 1; fi;; esac; done\n"
                               "exec opt-22 \"$@\"\n");
}

class HarvestExplore : public SmallInlinerCorpusSuite {
protected:
  std::string harvest(const std::string &out, const std::string &flags) {
    return harvestCommand(corpus(), out, "--num_workers=2 " + flags);
  }

  // Each module's kept trajectory, replayed afresh in `mode`, gives its log and size.
  void expectKeptEqualsFreshReplay(const std::string &out, const std::string &mode) {
    std::string kept = Work / ("kept-" + mode + ".jsonl"), replayed = Work / ("replayed-" + mode);
    fs::remove_all(replayed); // a test may check several explorations
    std::string lines;
    std::map<std::string, nlohmann::json> keptOf;
    for (const nlohmann::json &t : jsonLines(out + "/explore.jsonl"))
      if (t["kept"]) {
        EXPECT_FALSE(keptOf.count(t["module"])) << "two kept trajectories of " << t["module"];
        keptOf[t["module"]] = t;
        lines += nlohmann::json{{"module", t["module"]}, {"decisions", t["decisions"]}}.dump() + "\n";
      }
    ASSERT_EQ(keptOf.size(), Modules.size());
    writeFile(kept, lines);
    mustRun(harvest(replayed, "--mode=" + mode + " --policy=replay:" + quote(kept)));
    auto journal = journalByModule(out), fresh = journalByModule(replayed);
    for (const std::string &m : Modules) {
      ASSERT_EQ(fresh[m]["status"], "ok") << m << fresh[m].dump();
      EXPECT_EQ(fresh[m]["native_size"], keptOf[m]["native_size"]) << m;
      EXPECT_EQ(journal[m]["native_size"], keptOf[m]["native_size"]) << m << ": the journal describes the kept log";
      EXPECT_EQ(journal[m]["decisions"], keptOf[m]["decisions"].size()) << m;
      std::string a = readFile(out + "/logs/" + m + ".log"), b = readFile(replayed + "/logs/" + m + ".log");
      EXPECT_TRUE(a == b) << m << ": the kept log is not the replay's (" << a.size() << " and " << b.size()
                          << " bytes)";
    }
  }

  TempDir Work;
};

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
std::vector<double> marginCertainty(const std::string &sites) {
  std::vector<double> certainty;
  for (const nlohmann::json &site : jsonLines(sites))
    certainty.push_back(site["cost_margin"].is_null() ? std::numeric_limits<double>::infinity()
                                                      : std::fabs(site["cost_margin"].get<double>()));
  return certainty;
}
std::vector<double> logitCertainty(const std::string &log) {
  std::vector<double> certainty;
  for (const LoggedObservation &o : readObservations(log)) {
    const std::vector<double> &logits = o.Features.at("inlining_logits");
    certainty.push_back(std::fabs(logits.at(1) - logits.at(0)));
  }
  return certainty;
}
// The first least sure step from `from` on.
size_t leastSure(const std::vector<double> &certainty, size_t from) {
  size_t least = from;
  for (size_t s = from + 1; s < certainty.size(); ++s)
    if (certainty[s] < certainty[least])
      least = s;
  return least;
}

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
  EXPECT_EQ(harvestSummary(out)["explore"]["forked"], 0) << "rollouts are not forked";
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
