#include "mlgo/explore/ExplorationCommit.h"
#include "mlgo/harvest/HarvestLink.h"

#include "mlgo/compile/WorkDirectory.h"
#include "mlgo/corpus/ModuleNaming.h"
#include "mlgo/evaluate/LinkStep.h"
#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/DirectoryLock.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/PlaceBeneath.h"
#include "mlgo/support/StaleTemporaries.h"

#include "llvm/Support/MemoryBuffer.h"

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <limits>
#include <map>
#include <set>
#include <unistd.h>

namespace mlgo {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char *CommitDone = "explore/commit.done";
constexpr const char *PlanFormat = "mlgo-explore-commit-1";
// The plan is ours, but what lies below OUT is read as someone else's:
// bounded (a few hundred bytes a module), and every field checked.
constexpr size_t MaxPlanBytes = size_t{64} << 20;
constexpr uint64_t MaxCount = uint64_t{1} << 48;

// Test seam (docs/harvest-exploration.md#what-an-interrupted-exploration-leaves): MLGO_EXPLORE_KILL_AT=N kills this
// process with SIGKILL at the Nth point of a commit (staging and installing),
// as the OOM killer or a node failure could; tests walk every point.
void commitPoint() {
  static const long killAt = [] {
    const char *value = std::getenv("MLGO_EXPLORE_KILL_AT");
    return value ? std::atol(value) : 0L;
  }();
  static long reached = 0;
  if (killAt > 0 && ++reached == killAt)
    ::raise(SIGKILL);
}

std::string below(const char *dir, llvm::StringRef relative) { return std::string(dir) + "/" + relative.str(); }

std::string objectsBelow(const char *dir, const std::string &module) {
  return below(dir, "objects/" + workDirectoryName(module) + ".o");
}

llvm::Expected<std::string> readText(llvm::StringRef root, llvm::StringRef relative) {
  auto buffer = readFileBeneath(root, relative);
  if (!buffer)
    return buffer.takeError();
  if ((*buffer)->getBufferSize() > MaxPlanBytes)
    return llvm::createStringError("%s is larger than %zu bytes", joinPath(root, relative).c_str(), MaxPlanBytes);
  return (*buffer)->getBuffer().str();
}

Json planJson(const CommitPlan &plan) {
  Json j;
  j["format"] = PlanFormat;
  j["rounds"] = plan.Rounds;
  const ExploreResult &r = plan.Result;
  j["result"] = {{"modules", r.Modules},
                 {"explored", r.Explored},
                 {"failed", r.FailedTrajectories},
                 {"improved", r.Improved},
                 {"forked", r.Forked},
                 {"base_total_size", r.BaseTotalSize},
                 {"kept_total_size", r.KeptTotalSize}};
  j["improved"] = Json::array();
  for (const CommitPlan::Kept &k : plan.Improved)
    j["improved"].push_back({{"module", k.Module}, {"round", k.Round}});
  j["imitation"] = Json::array();
  for (const ImitationModule &m : plan.Imitation)
    j["imitation"].push_back({{"module", m.Name},
                              {"kept_size", m.KeptSize},
                              {"base_size", m.BaseSize},
                              {"kept_decisions", m.KeptHorizon},
                              {"base_decisions", m.BaseHorizon}});
  return j;
}

// The plan back, every field checked; an error names the file.
llvm::Expected<CommitPlan> parsePlan(const std::string &text, const std::string &path, unsigned maxRounds) {
  auto bad = [&](const std::string &why) {
    return llvm::createStringError("%s: %s: not a commit this version of harvest-logs staged; remove OUT/%s to "
                                   "explore again from the base harvest",
                                   path.c_str(), why.c_str(), CommitDir);
  };
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("format", Json()) != PlanFormat)
    return bad("no format " + std::string(PlanFormat));
  auto count = [](const Json &parent, const char *key, auto &to) {
    using T = std::remove_reference_t<decltype(to)>;
    if (!parent.is_object() || !parent.contains(key) || !parent[key].is_number_unsigned())
      return false;
    uint64_t value = parent[key].get<uint64_t>();
    if (value > MaxCount || value > std::numeric_limits<T>::max())
      return false;
    to = static_cast<T>(value);
    return true;
  };
  CommitPlan plan;
  const Json &r = j.value("result", Json());
  ExploreResult &result = plan.Result;
  if (!count(j, "rounds", plan.Rounds) || !count(r, "modules", result.Modules) ||
      !count(r, "explored", result.Explored) || !count(r, "failed", result.FailedTrajectories) ||
      !count(r, "improved", result.Improved) || !count(r, "forked", result.Forked) ||
      !count(r, "base_total_size", result.BaseTotalSize) || !count(r, "kept_total_size", result.KeptTotalSize))
    return bad("a count is missing, not a number or out of range");
  if (plan.Rounds > maxRounds)
    return bad(std::to_string(plan.Rounds) + " rounds, more than --explore=" + std::to_string(maxRounds));
  if (!j.contains("improved") || !j["improved"].is_array() || !j.contains("imitation") || !j["imitation"].is_array())
    return bad("no improved or imitation list");
  for (const Json &k : j["improved"]) {
    CommitPlan::Kept kept;
    if (!k.is_object() || !k.contains("module") || !k["module"].is_string() || !count(k, "round", kept.Round))
      return bad("an improved entry is not {module, round}");
    kept.Module = k["module"];
    if (llvm::Error e = checkModuleName(kept.Module))
      return bad(llvm::toString(std::move(e)));
    plan.Improved.push_back(std::move(kept));
  }
  for (const Json &m : j["imitation"]) {
    ImitationModule module;
    if (!m.is_object() || !m.contains("module") || !m["module"].is_string() ||
        !count(m, "kept_size", module.KeptSize) || !count(m, "base_size", module.BaseSize) ||
        !count(m, "kept_decisions", module.KeptHorizon) || !count(m, "base_decisions", module.BaseHorizon))
      return bad("an imitation entry is not {module, kept_size, base_size, kept_decisions, base_decisions}");
    module.Name = m["module"];
    if (llvm::Error e = checkModuleName(module.Name))
      return bad(llvm::toString(std::move(e)));
    plan.Imitation.push_back(std::move(module));
  }
  // Every kept module is one of the plan's, once; the counts agree.
  std::set<std::string> names;
  for (const ImitationModule &m : plan.Imitation)
    if (!names.insert(m.Name).second)
      return bad("module " + m.Name + " is listed twice");
  std::set<std::string> kept;
  for (const CommitPlan::Kept &k : plan.Improved)
    if (!names.count(k.Module) || !kept.insert(k.Module).second || k.Round < 1 || k.Round > plan.Rounds)
      return bad("improved module " + k.Module +
                 " is not one of the plan's modules, is listed twice, or names no "
                 "round that ran");
  if (result.Modules != plan.Imitation.size() || result.Improved != plan.Improved.size())
    return bad("its counts do not match its lists");
  return plan;
}

// Renames `from` to `to` (both below OUT/explore), following no link.
llvm::Error renameBelowExplore(const std::string &outputDir, const char *from, const char *to) {
  auto source = openParentBeneath(outputDir, from);
  if (!source)
    return source.takeError();
  auto target = openParentBeneath(outputDir, to);
  if (!target)
    return target.takeError();
  if (::renameat(source->Dir.get(), source->Name.c_str(), target->Dir.get(), target->Name.c_str()) != 0)
    return llvm::make_error<BeneathError>(source->Shown, outputDir, errno);
  return syncDirectoryDescriptor(target->Dir.get(), joinPath(outputDir, "explore"));
}

// summary.json's explore entry, and its `linked` for the kept program.
Json exploredSummary(Json summary, const ExploreSettings &settings, const ExploreResult &result,
                     const std::optional<LinkResult> &keptLink, const std::string &profiles) {
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
  return summary;
}

} // namespace

llvm::Error removeFinishedCommit(const std::string &outputDir, bool lock) {
  if (lock) {
    auto held = DirectoryLock::acquire(outputDir, joinPath(outputDir, ".mlgo-harvest"));
    if (!held) {
      llvm::consumeError(held.takeError());
      return llvm::Error::success();
    }
    return removeTreeBeneath(outputDir, CommitDone);
  }
  return removeTreeBeneath(outputDir, CommitDone);
}

llvm::Expected<ExplorationState> explorationState(const std::string &outputDir) {
  auto committing = existsBeneath(outputDir, CommitDir);
  if (!committing)
    return committing.takeError();
  if (*committing)
    return ExplorationState::Committing;
  auto complete = existsBeneath(outputDir, "explore.jsonl");
  if (!complete)
    return complete.takeError();
  return *complete ? ExplorationState::Complete : ExplorationState::None;
}

llvm::Error stageCommit(const HarvestOptions &options, const CommitPlan &plan, const std::string &table) {
  const std::string &out = options.OutputDir;
  for (const char *dir : {CommitStaging, CommitDone})
    if (llvm::Error e = removeTreeBeneath(out, dir))
      return e;
  if (llvm::Error e = makeDirectoriesBeneath(out, CommitStaging))
    return e;
  std::string staging = joinPath(out, CommitStaging);
  // The journal as it will be: the base harvest's (compacted by it) and the
  // kept trajectories' records after it, which readers take as the latest.
  auto journal = readOwnFile(harvestJournalPath(out));
  if (!journal)
    return journal.takeError();
  std::string journalText = (*journal)->getBuffer().str();
  if (!journalText.empty() && journalText.back() != '\n')
    journalText += '\n';
  for (const CommitPlan::Kept &kept : plan.Improved)
    journalText += jsonLine(Json::parse(kept.JournalLine));
  auto summary = readOwnFile(joinPath(out, "summary.json"));
  if (!summary)
    return summary.takeError();
  for (auto [name, text] : {std::pair<const char *, llvm::StringRef>{"harvest.jsonl", journalText},
                            {"explore.jsonl", table},
                            {"summary.json", (*summary)->getBuffer()}})
    if (llvm::Error e = writeFileAtomically(joinPath(staging, name), text))
      return e;
  commitPoint();
  // The kept logs (and sites) from their rounds, and, for --link, every
  // module's object: the kept trajectory's, or the base's.
  for (const CommitPlan::Kept &kept : plan.Improved) {
    std::string round = "explore/round-" + std::to_string(kept.Round);
    if (llvm::Error e = placeBeneath(out, round + "/" + harvestLogName(kept.Module), out,
                                     below(CommitStaging, harvestLogName(kept.Module))))
      return e;
    std::string sites = round + "/" + harvestSitesName(kept.Module);
    auto hasSites = existsBeneath(out, sites);
    if (!hasSites)
      return hasSites.takeError();
    if (*hasSites)
      if (llvm::Error e = placeBeneath(out, sites, out, below(CommitStaging, harvestSitesName(kept.Module))))
        return e;
  }
  if (options.Link.requested()) {
    std::map<std::string, unsigned> keptRound;
    for (const CommitPlan::Kept &kept : plan.Improved)
      keptRound[kept.Module] = kept.Round;
    for (const ImitationModule &m : plan.Imitation) {
      auto it = keptRound.find(m.Name);
      std::string from = it == keptRound.end()
                             ? stagedObjectName(m.Name)
                             : "explore/round-" + std::to_string(it->second) + "/" + stagedObjectName(m.Name);
      if (llvm::Error e = placeBeneath(out, from, out, objectsBelow(CommitStaging, m.Name))) {
        // A module without its object is not linked; the link says so.
        if (!consumeIfMissing(e))
          return e;
      }
    }
  }
  commitPoint();
  // The plan last: a staging directory without one is never renamed.
  if (llvm::Error e = writeFileAtomically(joinPath(staging, "plan.json"), planJson(plan).dump(1) + "\n"))
    return e;
  commitPoint();
  return renameBelowExplore(out, CommitStaging, CommitDir);
}

llvm::Expected<ExploreResult> finishCommit(const HarvestOptions &options, const ExploreSettings &settings) {
  const std::string &out = options.OutputDir;
  std::string planPath = joinPath(joinPath(out, CommitDir), "plan.json");
  auto planText = readText(out, below(CommitDir, "plan.json"));
  if (!planText)
    return planText.takeError();
  auto parsed = parsePlan(*planText, planPath, settings.Trajectories);
  if (!parsed)
    return parsed.takeError();
  CommitPlan &plan = *parsed;
  ExploreResult result = plan.Result;
  // An earlier install killed between a link and its rename left a
  // temporary beside the log, sites file or object it was installing.
  for (const CommitPlan::Kept &kept : plan.Improved) {
    std::string logs = dirName(harvestLogName(kept.Module)).str();
    std::set<std::string, std::less<>> own = {baseName(harvestLogName(kept.Module)).str(),
                                              baseName(harvestSitesName(kept.Module)).str()};
    if (auto removed = removeStaleTemporaries(out, logs, own); !removed)
      return removed.takeError();
  }
  std::set<std::string, std::less<>> objects;
  for (const ImitationModule &m : plan.Imitation)
    objects.insert(workDirectoryName(m.Name) + ".o");
  if (auto removed = removeStaleTemporaries(out, ".mlgo-harvest/objects", objects); !removed)
    return removed.takeError();
  commitPoint();

  // The kept logs, then the journal that describes them: until the journal
  // is in place a resumed base harvest would still count them as the base's,
  // which is why a killed run never resumes from here but installs again.
  for (const CommitPlan::Kept &kept : plan.Improved) {
    if (llvm::Error e =
            placeBeneath(out, below(CommitDir, harvestLogName(kept.Module)), out, harvestLogName(kept.Module)))
      return std::move(e);
    auto hasSites = existsBeneath(out, below(CommitDir, harvestSitesName(kept.Module)));
    if (!hasSites)
      return hasSites.takeError();
    if (*hasSites)
      if (llvm::Error e =
              placeBeneath(out, below(CommitDir, harvestSitesName(kept.Module)), out, harvestSitesName(kept.Module)))
        return std::move(e);
    commitPoint();
  }
  if (auto journal = readText(out, below(CommitDir, "harvest.jsonl")); !journal)
    return journal.takeError();
  else if (llvm::Error e = writeFileAtomically(harvestJournalPath(out), *journal))
    return std::move(e);
  commitPoint();

  std::optional<LinkResult> keptLink;
  if (options.Link.requested()) {
    for (const ImitationModule &m : plan.Imitation) {
      if (llvm::Error e = placeBeneath(out, objectsBelow(CommitDir, m.Name), out, stagedObjectName(m.Name)))
        if (!consumeIfMissing(e))
          return std::move(e);
    }
    HarvestOptions kept = options;
    kept.Link.KeepObjects = settings.KeepObjects;
    auto linked = relinkHarvest(kept);
    if (!linked)
      return linked.takeError();
    keptLink = std::move(*linked);
    result.Linked = keptLink->ok();
    for (unsigned round = 1; round <= plan.Rounds; ++round)
      if (llvm::Error e = removeTreeBeneath(out, "explore/round-" + std::to_string(round) + "/.mlgo-harvest/objects"))
        log::warning("--explore: cannot remove round " + std::to_string(round) +
                     "'s objects: " + llvm::toString(std::move(e)));
    commitPoint();
  }
  if (auto table = readText(out, below(CommitDir, "explore.jsonl")); !table)
    return table.takeError();
  else if (llvm::Error e = writeFileAtomically(joinPath(out, "explore.jsonl"), *table))
    return std::move(e);
  commitPoint();
  // The fork chains' trajectories are all recorded in the rounds now.
  if (llvm::Error e = removeTreeBeneath(out, "explore/chains"))
    log::warning("--explore: cannot remove explore/chains: " + llvm::toString(std::move(e)));

  // ml-compiler-opt's files: its profiles always, its trajectories with --tfrecord.
  for (ImitationModule &m : plan.Imitation) {
    m.KeptLog = harvestLogPath(out, m.Name);
    m.Below = out;
    m.KeptLogBelow = harvestLogName(m.Name);
  }
  std::string profiles = joinPath(out, "profile");
  if (llvm::Error e = writeImitationProfiles(plan.Imitation, profiles))
    return std::move(e);
  commitPoint();

  // summary.json: the base harvest's, as the commit saved it, with what the
  // exploration found.
  std::string summaryPath = joinPath(out, "summary.json");
  auto baseText = readText(out, below(CommitDir, "summary.json"));
  if (!baseText)
    return baseText.takeError();
  Json base = Json::parse(*baseText, nullptr, /*allow_exceptions=*/false);
  if (!base.is_object())
    return llvm::createStringError("%s is not a JSON object",
                                   joinPath(joinPath(out, CommitDir), "summary.json").c_str());
  if (base.contains("modules") && base["modules"].is_object()) {
    const Json &modules = base["modules"];
    if (modules.value("failed", Json()).is_number_unsigned())
      result.BaseFailed = modules["failed"].get<size_t>();
    if (modules.value("timeout", Json()).is_number_unsigned())
      result.BaseTimedOut = modules["timeout"].get<size_t>();
  }
  Json summary = exploredSummary(std::move(base), settings, result, keptLink, profiles);
  if (llvm::Error e = writeFileAtomically(summaryPath, summary.dump(2) + "\n"))
    return std::move(e);
  commitPoint();

  // Complete: the commit goes in one rename, then its files.
  if (llvm::Error e = renameBelowExplore(out, CommitDir, CommitDone))
    return std::move(e);
  if (llvm::Error e = removeTreeBeneath(out, CommitDone))
    log::warning("--explore: cannot remove " + joinPath(out, CommitDone) + ": " + llvm::toString(std::move(e)));
  // The dataset last, after the commit: the exploration is recorded whole
  // before it, so a dataset that cannot be written costs only itself (and
  // merge-harvest --tfrecord writes it again from the directory).
  if (!settings.TrajectoryTFRecord.empty()) {
    auto written = writeImitationTrajectories(plan.Imitation, settings.TrajectoryTFRecord);
    if (!written)
      return llvm::createStringError("%s; the exploration itself is complete in %s (write its trajectories again "
                                     "with merge-harvest --tfrecord=%s on that directory)",
                                     llvm::toString(written.takeError()).c_str(), out.c_str(),
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
