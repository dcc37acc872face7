#include "mlgo/explore/Exploration.h"
#include "mlgo/explore/RolloutLogs.h"

#include "mlgo/log/DecisionSites.h"

#include "mlgo/compile/PluginMode.h"
#include "mlgo/explore/ExplorationCommit.h"
#include "mlgo/explore/ForkChains.h"
#include "mlgo/harvest/HarvestLink.h"
#include "mlgo/support/StaleTemporaries.h"

#include "mlgo/explore/ImitationDataset.h"
#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/HarvestTrajectories.h"
#include "mlgo/harvest/StepCertainty.h"
#include "mlgo/policy/RandomStream.h"
#include "mlgo/policy/Trajectory.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/DirectoryLock.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/MoveFile.h"
#include "mlgo/support/PathUtil.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

namespace mlgo {
namespace {

using Json = nlohmann::ordered_json;

// One trajectory of a module: the base (round 0) or an exploration.
struct Explored {
  unsigned Round = 0;
  std::optional<size_t> FlippedStep;
  std::optional<DecisionSite> FlippedSite;   // the call FlippedStep was about; none without sites files
  std::optional<DecisionSequence> Decisions; // as logged; none when it failed
  std::vector<double> Certainty;             // per decision, with --explore_order=uncertain
  std::optional<uint64_t> NativeSize;
  size_t Parent = 0; // the trajectory it replayed up to its flip
  std::string Status = "ok", Reason, Detail;
  std::string JournalLine; // its record in its round's journal
  bool Kept = false;
};

struct ModuleChain {
  std::string Name;
  std::vector<Explored> Trajectories; // [0] is the base
  size_t Newest = 0;                  // the newest trajectory that succeeded
  std::optional<size_t> LastFlip;     // the step flipped by the latest exploration
  // Rollouts: the parent's steps in the order they are flipped, the next
  // one's index there, the parent (the base, or with search the best so
  // far) and the first trajectory of the parent's sweep.
  std::vector<size_t> RolloutSteps;
  size_t Cursor = 0, Parent = 0, SweepStart = 1;
  unsigned Sweep = 0;
  bool Done = false;
};

Json decisionsJson(const std::optional<DecisionSequence> &decisions) {
  if (!decisions)
    return nullptr;
  Json list = Json::array();
  for (bool d : *decisions)
    list.push_back(d ? 1 : 0);
  return list;
}

// Without --baseline_cache, the exploration's own cache (base harvest and rounds).
std::string exploreBaselines(const std::string &outputDir) {
  return joinPath(joinPath(outputDir, "explore"), "baselines");
}

std::string roundDir(const HarvestOptions &options, unsigned round) {
  return joinPath(joinPath(options.OutputDir, "explore"), "round-" + std::to_string(round));
}

// Whether the base compiles can fork the rounds' trajectories as the
// decisions come: a chain follows an order it can tell step by step (not
// random:SEED, which draws from the whole trajectory); rollouts fork from
// the base as a star, for the order the plugin knows before the base ends
// (first: step i is trajectory i+1; the search's first sweep too).
bool forksRounds(const ExploreSettings &settings) {
  if (settings.Rollouts)
    return settings.How == ExploreSettings::Order::First;
  return settings.How != ExploreSettings::Order::Random;
}

// Rollouts: the parent trajectory's steps in the order their rollouts come:
// the least certain first (the earlier of equals), first to last, or a
// permutation drawn for the module and the sweep from the seed.
std::vector<size_t> rolloutSteps(const ExploreSettings &settings, const ModuleChain &chain) {
  const Explored &base = chain.Trajectories[chain.Parent];
  std::vector<size_t> steps(base.Decisions->size());
  std::iota(steps.begin(), steps.end(), size_t(0));
  if (settings.How == ExploreSettings::Order::Uncertain)
    std::sort(steps.begin(), steps.end(), [&](size_t a, size_t b) {
      return base.Certainty[a] != base.Certainty[b] ? base.Certainty[a] < base.Certainty[b] : a < b;
    });
  if (settings.How == ExploreSettings::Order::Random) {
    std::mt19937_64 rng;
    seedModuleStream(rng, settings.OrderSeed + chain.Sweep, chain.Name);
    for (size_t i = steps.size(); i > 1; --i) // Fisher-Yates, the same on every library
      std::swap(steps[i - 1], steps[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
  }
  return steps;
}

// The trajectory an exploration replays up to its flip: the newest one of
// a chain, the parent of a rollout.
size_t parentOf(const ExploreSettings &settings, const ModuleChain &chain) {
  return settings.Rollouts ? chain.Parent : chain.Newest;
}

bool loadCertainty(const ExploreSettings &settings, const HarvestOptions &options, const std::string &dir,
                   const std::string &module, Explored &trajectory, std::string &why);

// search: once a sweep has rolled out every step of its parent, its best
// rollout becomes the parent when it is smaller (the first of equals), and
// the next sweep rolls out its steps; false when none is smaller (or the
// new parent's certainty, which its order needs, cannot be read).
bool nextSweep(const ExploreSettings &settings, const HarvestOptions &options, ModuleChain &chain) {
  size_t best = chain.Parent;
  for (size_t i = chain.SweepStart; i < chain.Trajectories.size(); ++i)
    if (chain.Trajectories[i].NativeSize && *chain.Trajectories[i].NativeSize < *chain.Trajectories[best].NativeSize)
      best = i;
  if (best == chain.Parent)
    return false;
  Explored &parent = chain.Trajectories[best];
  std::string why;
  if (!loadCertainty(settings, options, roundDir(options, parent.Round), chain.Name, parent, why)) {
    log::warning("--explore: " + chain.Name + ": the search stops at trajectory " + std::to_string(best) +
                 ", whose certainty cannot be read: " + why);
    return false;
  }
  chain.Parent = best;
  chain.SweepStart = chain.Trajectories.size();
  chain.Cursor = 0;
  ++chain.Sweep;
  chain.RolloutSteps = rolloutSteps(settings, chain);
  return true;
}

// The step the next exploration flips. A chain's: after the last flip, in
// the newest trajectory (each flip moves down the chain, as
// ml-compiler-opt's does). A rollout's: its parent's next in rolloutSteps;
// with search, a sweep over the best rollout's steps follows.
std::optional<size_t> nextStep(const ExploreSettings &settings, const HarvestOptions &options, ModuleChain &chain,
                               unsigned round) {
  if (settings.Rollouts) {
    if (chain.Cursor >= chain.RolloutSteps.size() &&
        !(settings.Search && nextSweep(settings, options, chain) && !chain.RolloutSteps.empty()))
      return std::nullopt;
    return chain.RolloutSteps[chain.Cursor++];
  }
  size_t from = chain.LastFlip ? *chain.LastFlip + 1 : 0;
  size_t length = chain.Trajectories[chain.Newest].Decisions->size();
  if (from >= length)
    return std::nullopt;
  if (settings.How == ExploreSettings::Order::First)
    return from;
  if (settings.How == ExploreSettings::Order::Uncertain) {
    // The least sure step after the last flip; the first of equals (ml-compiler-opt
    // keeps a step only when its gap is strictly smaller).
    const std::vector<double> &certainty = chain.Trajectories[chain.Newest].Certainty;
    size_t least = from;
    for (size_t step = from + 1; step < length; ++step)
      if (certainty[step] < certainty[least])
        least = step;
    return least;
  }
  std::mt19937_64 rng;
  seedModuleStream(rng, settings.OrderSeed + round, chain.Name);
  return std::uniform_int_distribution<size_t>(from, length - 1)(rng);
}

// The call site a successful exploration flipped: line FlippedStep of its
// own sites file (the decisions before and at the flip are its parent's).
// Only a name for the reader: a file that does not give it leaves it null,
// with a warning, and the trajectory stands. Nothing without sites files.
void loadFlippedSite(const HarvestOptions &round, const std::string &dir, const std::string &module,
                     Explored &trajectory) {
  if (!decisionSitesWritten(round))
    return;
  std::string path = harvestSitesPath(dir, module);
  std::string problem;
  auto text = readFileBeneath(dir, harvestSitesName(module));
  if (!text) {
    problem = llvm::toString(text.takeError());
  } else {
    llvm::StringRef rest = (*text)->getBuffer();
    for (size_t line = 0; line < *trajectory.FlippedStep && !rest.empty(); ++line)
      rest = rest.split('\n').second;
    llvm::StringRef line = rest.split('\n').first;
    Json j = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    auto site = decisionSiteFromJson(j, path + " line " + std::to_string(*trajectory.FlippedStep + 1));
    if (site)
      trajectory.FlippedSite = std::move(*site);
    else
      problem = llvm::toString(site.takeError());
  }
  if (!problem.empty())
    log::warning("--explore: " + module + ": the call site of trajectory " + std::to_string(trajectory.Round) +
                 "'s flipped step is not known (flipped_site null): " + problem);
}

// Where the base policy's certainty comes from.
CertaintySource certaintySource(const HarvestOptions &options) {
  switch (options.Policy.How) {
  case PolicySpec::Kind::TFLite:
    return CertaintySource::Logits;
  case PolicySpec::Kind::Exec:
    return CertaintySource::PolicyCertainty;
  default:
    return CertaintySource::CostMargin;
  }
}

// Reads a successful trajectory's certainty when the order needs it; false
// (with `why`) when it cannot be read.
bool loadCertainty(const ExploreSettings &settings, const HarvestOptions &options, const std::string &dir,
                   const std::string &module, Explored &trajectory, std::string &why) {
  if (settings.How != ExploreSettings::Order::Uncertain)
    return true;
  auto certainty = stepCertainty(certaintySource(options), dir, module, trajectory.Decisions->size());
  if (!certainty) {
    why = llvm::toString(certainty.takeError());
    return false;
  }
  trajectory.Certainty = std::move(*certainty);
  return true;
}

// What a killed exploration left half-written: harvest-logs' own files at
// OUT's top (Harvester.h), and in OUT/explore the temporaries of the first
// `rounds` rounds' trajectory files (round-<N>.jsonl). Nothing else, and no
// link, is touched.
llvm::Error removeDeadExplorationTemporaries(llvm::StringRef outputDir, unsigned rounds) {
  if (llvm::Error e = removeDeadHarvestTemporaries(outputDir))
    return e;
  auto explored = removeStaleTemporaries(outputDir, "explore", [&](llvm::StringRef stem) {
    unsigned round;
    return stem.consume_front("round-") && stem.consume_back(".jsonl") && !stem.empty() && stem.front() != '0' &&
           llvm::all_of(stem, llvm::isDigit) && !stem.getAsInteger(10, round) && round >= 1 && round <= rounds;
  });
  return explored ? llvm::Error::success() : explored.takeError();
}

} // namespace

std::string ExploreSettings::describeOrder() const {
  std::string prefix = Search ? "search:" : Rollouts ? "rollouts:" : "";
  switch (How) {
  case Order::Uncertain:
    return prefix + "uncertain";
  case Order::First:
    return prefix + "first";
  case Order::Random:
    return prefix + "random:" + std::to_string(OrderSeed);
  }
  return "";
}

llvm::Error parseExploreOrder(llvm::StringRef text, ExploreSettings &settings) {
  std::string given = text.str();
  // "rollouts" and "search" alone take the default order.
  if (text == "rollouts" || text == "search")
    text = text == "search" ? "search:uncertain" : "rollouts:uncertain";
  settings.Search = text.consume_front("search:");
  settings.Rollouts = settings.Search || text.consume_front("rollouts:");
  if (text == "uncertain") {
    settings.How = ExploreSettings::Order::Uncertain;
    return llvm::Error::success();
  }
  if (text == "first") {
    settings.How = ExploreSettings::Order::First;
    return llvm::Error::success();
  }
  if (text.consume_front("random:") && !text.empty() && !text.getAsInteger(10, settings.OrderSeed)) {
    settings.How = ExploreSettings::Order::Random;
    return llvm::Error::success();
  }
  return llvm::createStringError("--explore_order must be uncertain, first or random:SEED, each optionally after "
                                 "rollouts:, not '%s'",
                                 given.c_str());
}

std::string explorationUnsupported(const HarvestOptions &options, const ExploreSettings &settings) {
  if (options.Decisions != Problem::Inliner)
    return "only the inliner's decisions are explored";
  PolicySpec::Kind base = options.Policy.How;
  if (base != PolicySpec::Kind::Default && base != PolicySpec::Kind::Random && base != PolicySpec::Kind::TFLite &&
      base != PolicySpec::Kind::Exec)
    return "the base policy must be default, random:P[:SEED], tflite:DIR or exec:CMD (a trajectory follows it after "
           "its flip)";
  if (options.Mode == AdvisorMode::Development)
    return "explored trajectories are replayed by the harvester or the plugin: use --mode=plugin or interactive";
  if (settings.How == ExploreSettings::Order::Uncertain) {
    if (base == PolicySpec::Kind::Random)
      return "--explore_order=uncertain (the default) needs the base policy's certainty, and random:P has none: "
             "give --explore_order=first or random:SEED";
    if (base == PolicySpec::Kind::Default && options.Mode != AdvisorMode::Plugin)
      return "--explore_order=uncertain (the default) reads the default heuristic's certainty (its inline cost "
             "against the threshold), which only the plugin reports: use --mode=plugin, or --explore_order=first "
             "or random:SEED";
  }
  return "";
}

void prepareBaseHarvest(HarvestOptions &options, ExploreSettings &settings) {
  // The sites name each flip's call site in explore.jsonl (and give the
  // default heuristic's certainty); only the plugin writes them.
  if (options.Mode == AdvisorMode::Plugin)
    options.DecisionSites = true;
  // An exec policy sends its certainty only when asked (the protocol grows by a float64 per decision).
  if (settings.How == ExploreSettings::Order::Uncertain && options.Policy.How == PolicySpec::Kind::Exec)
    options.Policy.ExecCertainty = true;
  if (options.Link.requested()) {
    settings.KeepObjects = options.Link.KeepObjects;
    options.Link.KeepObjects = true;
  }
  // Fork chains: in the plugin, from an in-process base policy, for an
  // order the plugin can follow as the decisions come (not random:SEED,
  // which draws from the whole trajectory). The compile server decides at
  // run time whether a compile can take it (harvest/ModuleHarvest.cpp).
  PolicySpec::Kind base = options.Policy.How;
  bool inProcess =
      base == PolicySpec::Kind::Default || base == PolicySpec::Kind::Random || base == PolicySpec::Kind::TFLite;
  ChainForking::Settings chains;
  chains.OutputDir = options.OutputDir;
  chains.ExplicitTemps = !options.ExplicitTempsDir.empty();
  chains.TimeoutSeconds = options.TimeoutSeconds;
  if (settings.Fork && forksRounds(settings) && settings.Trajectories && options.Mode == AdvisorMode::Plugin &&
      inProcess && options.Compiler.Kind == CompilerKind::Opt) {
    chains.Trajectories = settings.Trajectories;
    chains.Order = settings.Rollouts                                     ? "star"
                   : settings.How == ExploreSettings::Order::First       ? "first"
                   : certaintySource(options) == CertaintySource::Logits ? "logits"
                                                                         : "margin";
  }
  // Without chains too: a base compile removes what an earlier run's chain
  // left of its module.
  options.Hooks = std::make_shared<ChainForking>(std::move(chains));
  // The rounds' rewards need each module's default size: a default base
  // harvest stores its own sizes, another computes them once, for all rounds.
  if (options.BaselineCacheDir.empty())
    options.BaselineCacheDir = exploreBaselines(options.OutputDir);
}

llvm::Expected<ExploreResult> runExploration(const HarvestOptions &options, const ExploreSettings &settings) {
  // OUT is ours while we explore, as it is the harvest's while it runs: a
  // second run there would append to the journal and replace logs beside us.
  auto lock = DirectoryLock::acquire(options.OutputDir, joinPath(options.OutputDir, ".mlgo-harvest"));
  if (!lock)
    return lock.takeError();
  // A killed exploration's half-written files go (StaleTemporaries.h), and
  // a finished commit that was not yet removed.
  if (llvm::Error e = removeDeadExplorationTemporaries(options.OutputDir, settings.Trajectories))
    return std::move(e);
  if (llvm::Error e = removeFinishedCommit(options.OutputDir))
    return std::move(e);
  // A run killed while it installed its kept trajectories: the commit it
  // staged is finished, not explored again from the half-installed state.
  auto state = explorationState(options.OutputDir);
  if (!state)
    return state.takeError();
  if (*state == ExplorationState::Committing) {
    log::info("--explore: finishing the exploration an interrupted run committed (" +
              joinPath(options.OutputDir, CommitDir) + ")");
    return finishCommit(options, settings);
  }
  if (llvm::Error e = removeTreeBeneath(options.OutputDir, CommitStaging))
    return std::move(e);
  ExploreResult result;
  auto base = readHarvestJournal(harvestJournalPath(options.OutputDir));
  if (!base)
    return base.takeError();
  if (!base->Options)
    return llvm::createStringError("%s has no journal header: the base harvest did not run", options.OutputDir.c_str());
  // Every module the base harvest finished ok, in journal order.
  std::vector<ModuleChain> chains;
  std::map<std::string, size_t> chainOf;
  for (const HarvestJournalLine &line : base->Latest) {
    const HarvestRecord &record = line.Record;
    if (!record.ok() || !record.NativeSize)
      continue;
    ModuleChain chain;
    chain.Name = record.Module;
    Explored start;
    start.NativeSize = record.NativeSize;
    start.JournalLine = line.Text;
    if (record.hasLog()) {
      auto decisions = harvestedDecisions(options.OutputDir, record.Module);
      if (!decisions)
        return decisions.takeError();
      start.Decisions = std::move(*decisions);
    } else {
      start.Decisions.emplace();
    }
    std::string why;
    if (!loadCertainty(settings, options, options.OutputDir, record.Module, start, why))
      return llvm::createStringError("the base trajectory of %s: %s", record.Module.c_str(), why.c_str());
    chain.Trajectories.push_back(std::move(start));
    if (settings.Rollouts)
      chain.RolloutSteps = rolloutSteps(settings, chain);
    chains.push_back(std::move(chain));
  }
  // In module order, not the base journal's finishing order: explore.jsonl
  // and the kept records come out the same for a seed, however the workers ran.
  std::sort(chains.begin(), chains.end(), [](const ModuleChain &a, const ModuleChain &b) { return a.Name < b.Name; });
  for (size_t i = 0; i < chains.size(); ++i)
    chainOf[chains[i].Name] = i;
  result.Modules = chains.size();
  // "default", "random:P:SEED" (exactly the parsed spec), "tflite:DIR" or the run's "exec:CMD".
  std::string then =
      options.Policy.How == PolicySpec::Kind::Exec ? "exec:" + options.Policy.Command : pluginPolicy(options.Policy);

  unsigned rounds = 0; // that ran
  for (unsigned round = 1; round <= settings.Trajectories; ++round) {
    std::string lines;
    std::set<std::string> members;
    std::map<std::string, size_t> flipped;
    std::map<std::string, DecisionSequence> prefixes;
    for (ModuleChain &chain : chains) {
      if (chain.Done)
        continue;
      std::optional<size_t> step = nextStep(settings, options, chain, round);
      if (!step) {
        chain.Done = true;
        continue;
      }
      const DecisionSequence &parent = *chain.Trajectories[parentOf(settings, chain)].Decisions;
      DecisionSequence prefix(parent.begin(), parent.begin() + *step + 1);
      prefix[*step] = !prefix[*step];
      lines += trajectoryLine(chain.Name, prefix, then);
      prefixes[chain.Name] = prefix;
      members.insert(chain.Name);
      flipped[chain.Name] = *step;
      chain.LastFlip = *step;
    }
    if (members.empty())
      break;
    rounds = round;
    std::string dir = roundDir(options, round);
    std::string file = dir + ".jsonl";
    // Below OUT nothing is followed: OUT/explore or a round planted as a
    // link would send the round's harvest elsewhere.
    std::string roundName = "explore/round-" + std::to_string(round);
    if (llvm::Error e = makeDirectoriesBeneath(options.OutputDir, roundName))
      return std::move(e);
    // An interrupted run left this round's trajectories: when they are
    // exactly these (every order is deterministic), its finished replays
    // stand and the round resumes; otherwise it starts afresh.
    bool resume = false;
    auto earlier = readFileBeneath(options.OutputDir, roundName + ".jsonl");
    if (!earlier) {
      llvm::Error error = earlier.takeError();
      if (!consumeIfMissing(error))
        return std::move(error);
    }
    auto journalThere = existsBeneath(options.OutputDir, roundName + "/harvest.jsonl");
    if (!journalThere)
      return journalThere.takeError();
    if (earlier && (*earlier)->getBuffer() == lines && *journalThere)
      resume = true;
    else if (llvm::Error e = writeFileAtomically(file, lines))
      return std::move(e);

    HarvestOptions round_ = options;
    round_.OutputDir = dir;
    round_.Policy.How = PolicySpec::Kind::Replay;
    round_.Policy.ReplayFile = file;
    // The only model a round's `then` may name (and its compiles may read).
    round_.Policy.ModelDir = options.Policy.How == PolicySpec::Kind::TFLite ? then.substr(strlen("tflite:")) : "";
    round_.Selection.Only = members;
    round_.Selection.SamplingRate = 1.0; // the members are already the base's sample and shard
    round_.Selection.ShardIndex = 0;
    round_.Selection.ShardCount = 1;
    round_.Selection.Filter.reset();
    round_.Force = !resume;
    round_.TFRecordPath.clear();
    round_.Link = {};
    // The base compiles' fork chains ran many of these trajectories already
    // (--explore_fork=false: every trajectory compiled).
    round_.Hooks.reset();
    if (settings.Fork && forksRounds(settings)) {
      ChainAdoption::Settings adoption;
      adoption.Round = round;
      adoption.ChainsDir = joinPath(joinPath(options.OutputDir, "explore"), "chains");
      adoption.Then = then;
      for (const std::string &member : members)
        adoption.Prefix[member] = prefixes[member];
      round_.Hooks = std::make_shared<ChainAdoption>(std::move(adoption));
    }
    round_.Link.StageOnly = options.Link.requested(); // a kept trajectory's object is linked
    // The replays' rewards need the default's size once per module, not once per round.
    if (round_.BaselineCacheDir.empty())
      round_.BaselineCacheDir = exploreBaselines(options.OutputDir);
    if (round_.BaselineCacheDir == exploreBaselines(options.OutputDir))
      if (llvm::Error e = makeDirectoriesBeneath(options.OutputDir, "explore/baselines"))
        return std::move(e);
    log::info("--explore: round " + std::to_string(round) + ": " + std::to_string(members.size()) + " trajectories" +
              (resume ? " (resumed: the interrupted run's replays of them stand)" : ""));
    auto summary = runHarvest(round_);
    if (!summary)
      return summary.takeError();
    result.Forked += summary->Adopted;
    auto journal = readHarvestJournal(harvestJournalPath(dir));
    if (!journal)
      return journal.takeError();
    for (const HarvestJournalLine &line : journal->Latest) {
      auto at = chainOf.find(line.Record.Module);
      if (at == chainOf.end() || !members.count(line.Record.Module))
        continue;
      ModuleChain &chain = chains[at->second];
      const HarvestRecord &record = line.Record;
      Explored explored;
      explored.Round = round;
      explored.FlippedStep = flipped[chain.Name];
      explored.Parent = parentOf(settings, chain);
      explored.Status = record.Status;
      explored.Reason = record.Reason;
      explored.Detail = record.Detail;
      explored.JournalLine = line.Text;
      if (record.ok() && record.NativeSize) {
        auto decisions = record.hasLog() ? harvestedDecisions(dir, record.Module)
                                         : llvm::Expected<DecisionSequence>(DecisionSequence());
        if (!decisions) {
          explored.Status = "failed";
          explored.Reason = "bad_training_log";
          explored.Detail = llvm::toString(decisions.takeError());
        } else {
          explored.Decisions = std::move(*decisions);
          explored.NativeSize = record.NativeSize;
          // Without its certainty it cannot be chained from: it still
          // counts (its size is measured), but is recorded as failed. A
          // rollout is no parent: its certainty is not needed.
          std::string why;
          if (!settings.Rollouts && !loadCertainty(settings, options, dir, record.Module, explored, why)) {
            explored.Status = "failed";
            explored.Reason = "no_certainty";
            explored.Detail = why;
            explored.Decisions.reset();
            explored.NativeSize.reset();
          } else {
            loadFlippedSite(round_, dir, record.Module, explored);
          }
        }
      }
      result.Explored++;
      if (!explored.Decisions)
        result.FailedTrajectories++;
      chain.Trajectories.push_back(std::move(explored));
      if (chain.Trajectories.back().Decisions)
        chain.Newest = chain.Trajectories.size() - 1;
    }
    if (summary->Interrupted || summary->Stopped) {
      result.Interrupted = summary->Interrupted;
      result.Stopped = summary->Stopped;
      return result; // nothing is kept: the next run explores afresh
    }
  }

  // Keep the smallest of each module; ties go to the earlier (the base first).
  CommitPlan plan;
  plan.Rounds = rounds;
  std::string table;
  for (ModuleChain &chain : chains) {
    size_t best = 0;
    for (size_t i = 1; i < chain.Trajectories.size(); ++i)
      if (chain.Trajectories[i].NativeSize && *chain.Trajectories[i].NativeSize < *chain.Trajectories[best].NativeSize)
        best = i;
    chain.Trajectories[best].Kept = true;
    result.BaseTotalSize += *chain.Trajectories[0].NativeSize;
    result.KeptTotalSize += *chain.Trajectories[best].NativeSize;
    const Explored &kept = chain.Trajectories[best];
    if (best != 0) {
      result.Improved++;
      plan.Improved.push_back({chain.Name, kept.Round, kept.JournalLine});
    }
    plan.Imitation.push_back({chain.Name, harvestLogPath(options.OutputDir, chain.Name), *kept.NativeSize,
                              *chain.Trajectories[0].NativeSize, kept.Decisions->size(),
                              chain.Trajectories[0].Decisions->size()});
    for (size_t i = 0; i < chain.Trajectories.size(); ++i) {
      const Explored &t = chain.Trajectories[i];
      Json j;
      j["module"] = chain.Name;
      j["trajectory"] = i;
      j["base_policy"] = options.Policy.describe();
      j["flipped_step"] = t.FlippedStep ? Json(*t.FlippedStep) : Json();
      if (settings.Search) // the trajectory it flipped a step of (every rollout's is the base otherwise)
        j["parent"] = t.FlippedStep ? Json(t.Parent) : Json();
      j["flipped_site"] = t.FlippedSite
                              ? Json{{"caller", t.FlippedSite->Caller},
                                     {"callee", t.FlippedSite->Callee},
                                     {"site", t.FlippedSite->Site},
                                     {"loc", t.FlippedSite->Location ? Json(*t.FlippedSite->Location) : Json()}}
                              : Json();
      j["status"] = t.Status;
      j["reason"] = t.Reason;
      j["detail"] = t.Detail;
      j["native_size"] = t.NativeSize ? Json(*t.NativeSize) : Json();
      j["kept"] = t.Kept;
      j["decisions"] = decisionsJson(t.Decisions);
      table += j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    }
  }
  plan.Result = result;
  // The rollouts beside the base's features, while OUT/logs is the base's.
  if (settings.Rollouts)
    for (const ModuleChain &chain : chains) {
      const Explored &base = chain.Trajectories[0];
      if (!base.Decisions || base.Decisions->empty())
        continue; // no log
      ModuleRollouts rollouts{chain.Name, *base.NativeSize, {}};
      for (const Explored &t : chain.Trajectories)
        if (t.FlippedStep && t.Parent == 0 && t.NativeSize)
          rollouts.FlippedSize[*t.FlippedStep] = *t.NativeSize;
      if (llvm::Error e = writeRolloutLog(options.OutputDir, rollouts))
        return std::move(e);
    }
  // Nothing of the base is replaced before the whole result is staged.
  if (llvm::Error e = stageCommit(options, plan, table))
    return std::move(e);
  return finishCommit(options, settings);
}

} // namespace mlgo
