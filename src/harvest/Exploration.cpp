#include "mlgo/harvest/Exploration.h"

#include "mlgo/compare/DecisionSites.h"

#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/ImitationDataset.h"
#include "mlgo/harvest/PluginMode.h"
#include "mlgo/harvest/RandomStream.h"
#include "mlgo/harvest/StepCertainty.h"
#include "mlgo/harvest/Trajectory.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/DirectoryLock.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/MoveFile.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cstring>
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
  std::string Status = "ok", Reason, Detail;
  std::string JournalLine; // its record in its round's journal
  bool Kept = false;
};

struct ModuleChain {
  std::string Name;
  std::vector<Explored> Trajectories; // [0] is the base
  size_t Newest = 0;                  // the newest trajectory that succeeded
  std::optional<size_t> LastFlip;     // the step flipped by the latest exploration
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

// The step the next exploration flips: after the last flip, in the newest
// trajectory (each flip moves down the chain, as ml-compiler-opt's does).
std::optional<size_t> nextStep(const ExploreSettings &settings, const ModuleChain &chain, unsigned round) {
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

llvm::Error writeKept(const HarvestOptions &options, const ModuleChain &chain, const Explored &kept,
                      JournalAppender &journal) {
  std::string from = roundDir(options, kept.Round);
  auto log = llvm::MemoryBuffer::getFile(harvestLogPath(from, chain.Name), /*IsText=*/false);
  if (!log)
    return llvm::createStringError(log.getError(), "cannot read the kept log of %s: %s", chain.Name.c_str(),
                                   log.getError().message().c_str());
  if (llvm::Error e = writeFileAtomically(harvestLogPath(options.OutputDir, chain.Name), (*log)->getBuffer()))
    return e;
  std::string sites = harvestSitesPath(from, chain.Name);
  if (llvm::sys::fs::exists(sites)) {
    auto text = llvm::MemoryBuffer::getFile(sites, /*IsText=*/false);
    if (!text)
      return llvm::createStringError(text.getError(), "cannot read %s", sites.c_str());
    if (llvm::Error e = writeFileAtomically(harvestSitesPath(options.OutputDir, chain.Name), (*text)->getBuffer()))
      return e;
  }
  // The module's latest journal record now describes the kept log.
  return journal.append(Json::parse(kept.JournalLine));
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
  auto text = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  std::string problem;
  if (!text) {
    problem = text.getError().message();
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

// --link: the kept trajectories' objects in place of the base's, linked as
// the harvest links (OUT/link/linked); the rounds' other objects removed.
llvm::Expected<LinkResult> linkKept(const HarvestOptions &options, const ExploreSettings &settings,
                                    const std::vector<ModuleChain> &chains, unsigned rounds) {
  for (const ModuleChain &chain : chains)
    for (const Explored &t : chain.Trajectories)
      if (t.Kept && t.Round != 0)
        if (llvm::Error e = moveFile(stagedObjectPath(roundDir(options, t.Round), chain.Name),
                                     stagedObjectPath(options.OutputDir, chain.Name)))
          return std::move(e);
  HarvestOptions kept = options;
  kept.Link.KeepObjects = settings.KeepObjects;
  auto linked = relinkHarvest(kept);
  for (unsigned round = 1; round <= rounds; ++round)
    if (llvm::Error e = removeTreeBeneath(roundDir(options, round), ".mlgo-harvest/objects"))
      log::warning("--explore: cannot remove round " + std::to_string(round) +
                   "'s objects: " + llvm::toString(std::move(e)));
  return linked;
}

} // namespace

std::string ExploreSettings::describeOrder() const {
  switch (How) {
  case Order::Uncertain:
    return "uncertain";
  case Order::First:
    return "first";
  case Order::Random:
    return "random:" + std::to_string(OrderSeed);
  }
  return "";
}

llvm::Error parseExploreOrder(llvm::StringRef text, ExploreSettings &settings) {
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
  return llvm::createStringError("--explore_order must be uncertain, first or random:SEED, not '%s'",
                                 text.str().c_str());
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
  // run time whether a compile can take it (Harvester.cpp).
  PolicySpec::Kind base = options.Policy.How;
  bool inProcess =
      base == PolicySpec::Kind::Default || base == PolicySpec::Kind::Random || base == PolicySpec::Kind::TFLite;
  if (settings.Fork && settings.Trajectories && options.Mode == AdvisorMode::Plugin && inProcess &&
      options.Compiler.Kind == CompilerKind::Opt && settings.How != ExploreSettings::Order::Random) {
    options.Chains.Trajectories = settings.Trajectories;
    options.Chains.Order = settings.How == ExploreSettings::Order::First         ? "first"
                           : certaintySource(options) == CertaintySource::Logits ? "logits"
                                                                                 : "margin";
  }
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
      auto decisions = loggedDecisions(harvestLogPath(options.OutputDir, record.Module));
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
      std::optional<size_t> step = nextStep(settings, chain, round);
      if (!step) {
        chain.Done = true;
        continue;
      }
      DecisionSequence prefix(chain.Trajectories[chain.Newest].Decisions->begin(),
                              chain.Trajectories[chain.Newest].Decisions->begin() + *step + 1);
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
    if (std::error_code ec = llvm::sys::fs::create_directories(joinPath(options.OutputDir, "explore")))
      return llvm::createStringError(ec, "cannot create %s/explore: %s", options.OutputDir.c_str(),
                                     ec.message().c_str());
    // An interrupted run left this round's trajectories: when they are
    // exactly these (every order is deterministic), its finished replays
    // stand and the round resumes; otherwise it starts afresh.
    bool resume = false;
    if (auto earlier = llvm::MemoryBuffer::getFile(file, /*IsText=*/false);
        earlier && (*earlier)->getBuffer() == lines && llvm::sys::fs::exists(harvestJournalPath(dir)))
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
    round_.Chains = {};
    // The base compiles' fork chains ran many of these trajectories already.
    round_.Adopt.Round = settings.Fork ? round : 0; // --explore_fork=false: every trajectory compiled
    round_.Adopt.ChainsDir = joinPath(joinPath(options.OutputDir, "explore"), "chains");
    round_.Adopt.Then = then;
    round_.Adopt.Prefix.clear();
    for (const std::string &member : members)
      round_.Adopt.Prefix[member] = prefixes[member];
    round_.Link.StageOnly = options.Link.requested(); // a kept trajectory's object is linked
    // The replays' rewards need the default's size once per module, not once per round.
    if (round_.BaselineCacheDir.empty())
      round_.BaselineCacheDir = exploreBaselines(options.OutputDir);
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
      explored.Status = record.Status;
      explored.Reason = record.Reason;
      explored.Detail = record.Detail;
      explored.JournalLine = line.Text;
      if (record.ok() && record.NativeSize) {
        auto decisions = record.hasLog() ? loggedDecisions(harvestLogPath(dir, record.Module))
                                         : llvm::Expected<DecisionSequence>(DecisionSequence());
        if (!decisions) {
          explored.Status = "failed";
          explored.Reason = "bad_training_log";
          explored.Detail = llvm::toString(decisions.takeError());
        } else {
          explored.Decisions = std::move(*decisions);
          explored.NativeSize = record.NativeSize;
          // Without its certainty it cannot be chained from: it still
          // counts (its size is measured), but is recorded as failed.
          std::string why;
          if (!loadCertainty(settings, options, dir, record.Module, explored, why)) {
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
  JournalAppender journal;
  if (llvm::Error e = journal.open(harvestJournalPath(options.OutputDir), /*truncate=*/false, *base->Options))
    return std::move(e);
  std::string table;
  for (ModuleChain &chain : chains) {
    size_t best = 0;
    for (size_t i = 1; i < chain.Trajectories.size(); ++i)
      if (chain.Trajectories[i].NativeSize && *chain.Trajectories[i].NativeSize < *chain.Trajectories[best].NativeSize)
        best = i;
    chain.Trajectories[best].Kept = true;
    result.BaseTotalSize += *chain.Trajectories[0].NativeSize;
    result.KeptTotalSize += *chain.Trajectories[best].NativeSize;
    if (best != 0) {
      result.Improved++;
      if (llvm::Error e = writeKept(options, chain, chain.Trajectories[best], journal))
        return std::move(e);
    }
    for (size_t i = 0; i < chain.Trajectories.size(); ++i) {
      const Explored &t = chain.Trajectories[i];
      Json j;
      j["module"] = chain.Name;
      j["trajectory"] = i;
      j["base_policy"] = options.Policy.describe();
      j["flipped_step"] = t.FlippedStep ? Json(*t.FlippedStep) : Json();
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
  if (llvm::Error e = journal.close())
    return std::move(e);
  std::optional<LinkResult> keptLink;
  if (options.Link.requested()) {
    auto linked = linkKept(options, settings, chains, rounds);
    if (!linked)
      return linked.takeError();
    keptLink = std::move(*linked);
    result.Linked = keptLink->ok();
  }
  if (llvm::Error e = writeFileAtomically(joinPath(options.OutputDir, "explore.jsonl"), table))
    return std::move(e);
  // The fork chains' trajectories are all recorded in the rounds now.
  if (llvm::sys::fs::exists(joinPath(joinPath(options.OutputDir, "explore"), "chains")))
    if (llvm::Error e = removeTreeBeneath(options.OutputDir, "explore/chains"))
      log::warning("--explore: cannot remove explore/chains: " + llvm::toString(std::move(e)));

  // ml-compiler-opt's files: its profiles always, its trajectories with --tfrecord.
  std::vector<ImitationModule> imitation;
  for (const ModuleChain &chain : chains) {
    const Explored &base = chain.Trajectories[0];
    const Explored &kept =
        *std::find_if(chain.Trajectories.begin(), chain.Trajectories.end(), [](const Explored &t) { return t.Kept; });
    imitation.push_back({chain.Name, harvestLogPath(options.OutputDir, chain.Name), *kept.NativeSize, *base.NativeSize,
                         kept.Decisions->size(), base.Decisions->size()});
  }
  std::string profiles = joinPath(options.OutputDir, "profile");
  if (llvm::Error e = writeImitationProfiles(imitation, profiles))
    return std::move(e);

  // summary.json gains what the exploration found.
  std::string summaryPath = joinPath(options.OutputDir, "summary.json");
  auto text = llvm::MemoryBuffer::getFile(summaryPath, /*IsText=*/true);
  if (!text)
    return llvm::createStringError(text.getError(), "cannot read %s", summaryPath.c_str());
  Json summary = Json::parse((*text)->getBuffer().begin(), (*text)->getBuffer().end(), nullptr, false);
  if (summary.is_discarded() || !summary.is_object())
    return llvm::createStringError("%s is not a JSON object", summaryPath.c_str());
  Json explore;
  explore["trajectories_per_module"] = settings.Trajectories;
  explore["order"] = settings.describeOrder();
  explore["modules"] = result.Modules;
  explore["explored"] = result.Explored;
  explore["failed"] = result.FailedTrajectories;
  explore["improved"] = result.Improved;
  explore["forked"] = result.Forked;
  explore["base_total_size"] = result.BaseTotalSize;
  explore["kept_total_size"] = result.KeptTotalSize;
  explore["profiles"] = profiles;
  if (keptLink) {
    // `linked` describes OUT/link/linked, the kept trajectories' program now.
    Json base = summary.contains("linked") && summary["linked"].is_object() ? summary["linked"] : Json();
    bool bothLinked = keptLink->ok() && base.is_object() && base.value("status", "") == "ok";
    auto sizes = [](const Json &linked) -> Json {
      return linked.is_object() && linked.value("status", "") == "ok" && linked.contains("sizes") ? linked["sizes"]
                                                                                                  : Json();
    };
    Json kept = keptLink->toJson();
    auto change = [&](const char *size) -> Json {
      Json from = sizes(base), to = sizes(kept);
      if (!bothLinked || !from.is_object() || !to.is_object() || !from.value(size, Json()).is_number() ||
          !to.value(size, Json()).is_number() || from[size].get<double>() <= 0)
        return nullptr;
      return to[size].get<double>() / from[size].get<double>() - 1;
    };
    explore["linked"] = {{"base", sizes(base)},
                         {"kept", sizes(kept)},
                         {"text_change", change("text")},
                         {"allocated_change", change("allocated")}};
    summary["linked"] = kept;
  }
  summary["explore"] = explore;
  if (llvm::Error e = writeFileAtomically(summaryPath, summary.dump(2) + "\n"))
    return std::move(e);

  // The dataset last: the exploration is recorded whole before it, so a
  // dataset that cannot be written costs only itself.
  if (!settings.TrajectoryTFRecord.empty()) {
    auto written = writeImitationTrajectories(imitation, settings.TrajectoryTFRecord);
    if (!written)
      return llvm::createStringError("%s; the exploration itself is complete in %s (write its trajectories again "
                                     "with merge-harvest --tfrecord=%s on that directory)",
                                     llvm::toString(written.takeError()).c_str(), options.OutputDir.c_str(),
                                     settings.TrajectoryTFRecord.c_str());
    summary["explore"]["trajectory_tfrecord"] = {{"path", settings.TrajectoryTFRecord},
                                                 {"records", written->Records},
                                                 {"steps", written->Steps},
                                                 {"without_decisions", written->SkippedWithoutDecisions}};
    if (llvm::Error e = writeFileAtomically(summaryPath, summary.dump(2) + "\n"))
      return std::move(e);
  }
  return result;
}

} // namespace mlgo
