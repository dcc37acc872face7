#include "mlgo/run/PolicyBatch.h"
#include "mlgo/harvest/HarvestLink.h"

#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/ModulePlan.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <fcntl.h>
#include <map>

namespace mlgo {

std::string batchPolicyDir(const std::string &outputDir, size_t k) {
  return joinPath(joinPath(outputDir, "policies"), std::to_string(k));
}

namespace {

// Policy k's summary.json entry `key` (`linked`, `explore`) as its harvest
// recorded it, so that a resumed batch reports earlier runs' too; null when none.
nlohmann::ordered_json recordedEntry(const BatchPolicy &policy, const char *key) {
  // OUT/policies/<k>/summary.json, through no link below OUT (a policy this
  // run did not reach was never checked).
  std::string dir = policy.Options.OutputDir, out = dirName(dirName(dir)).str();
  auto buffer = readFileBeneath(out, "policies/" + baseName(dir).str() + "/summary.json");
  if (!buffer) {
    llvm::consumeError(buffer.takeError());
    return nullptr;
  }
  auto summary = nlohmann::ordered_json::parse((*buffer)->getBuffer(), nullptr, /*allow_exceptions=*/false);
  if (!summary.is_object() || !summary.contains(key) || !summary[key].is_object())
    return nullptr;
  return summary[key];
}

// --explore: explores policy p's finished harvest; "" or why it could not.
std::string explorePolicy(const BatchPolicy &p, const ExploreSettings &explore, BatchResult &result) {
  auto explored = runExploration(p.Options, explore);
  if (!explored)
    return "--explore: " + llvm::toString(explored.takeError());
  result.Interrupted = explored->Interrupted;
  result.Stopped = explored->Stopped;
  return "";
}

// --link with --policies: each policy's linked sizes and their change
// against the default policy's link (the first `default` of the batch).
// Returns how many policies have no linked binary.
size_t addLinkedSizes(const std::vector<BatchPolicy> &policies, nlohmann::ordered_json &totals) {
  std::vector<nlohmann::ordered_json> links;
  std::optional<size_t> baseline;
  size_t notMade = 0;
  for (size_t k = 0; k < policies.size(); ++k) {
    links.push_back(recordedEntry(policies[k], "linked"));
    const nlohmann::ordered_json &l = links.back();
    // ok, with both sizes as numbers (a summary is data from someone else).
    bool ok = l.is_object() && l.value("status", nlohmann::ordered_json()) == "ok" && l.contains("sizes") &&
              l["sizes"].is_object() && l["sizes"].value("text", nlohmann::ordered_json()).is_number() &&
              l["sizes"].value("allocated", nlohmann::ordered_json()).is_number();
    if (!ok && l.is_object() && l.value("status", nlohmann::ordered_json()) == "ok")
      links.back() = nullptr;
    notMade += !ok;
    if (!baseline && policies[k].Options.Policy.How == PolicySpec::Kind::Default && ok)
      baseline = k;
  }
  auto change = [&](size_t k, const char *size) -> nlohmann::ordered_json {
    if (!baseline || !links[k].is_object() || links[k].value("status", nlohmann::ordered_json()) != "ok")
      return nullptr;
    double base = links[*baseline]["sizes"][size].get<double>();
    return base > 0 ? nlohmann::ordered_json(links[k]["sizes"][size].get<double>() / base - 1) : nullptr;
  };
  for (size_t k = 0; k < policies.size(); ++k) {
    const nlohmann::ordered_json &link = links[k];
    nlohmann::ordered_json linked = {
        {"status", link.is_object() ? link.value("status", nlohmann::ordered_json("not_attempted")) : "not_attempted"},
        {"reason", link.is_object() ? link.value("reason", nlohmann::ordered_json("")) : "the policy did not run"},
        {"text", nullptr},
        {"allocated", nullptr},
        {"baseline_policy_index", baseline ? nlohmann::ordered_json(*baseline) : nullptr},
        {"text_change", change(k, "text")},
        {"allocated_change", change(k, "allocated")}};
    if (link.is_object() && link.value("status", nlohmann::ordered_json()) == "ok")
      linked["text"] = link["sizes"]["text"], linked["allocated"] = link["sizes"]["allocated"];
    totals[k]["linked"] = std::move(linked);
  }
  if (!baseline)
    log::warning("--link: no linked `default` policy in the batch, so no linked change against it (add default to "
                 "--policies)");
  return notMade;
}

} // namespace

llvm::Expected<BatchResult> runPolicyBatch(std::vector<BatchPolicy> policies, const std::string &outputDir,
                                           const std::string &baselineCache, const ExploreSettings &explore) {
  if (policies.empty())
    return llvm::createStringError("--policies: no policy given");
  // The cells every policy owes: the selection, planned once.
  const HarvestOptions &first = policies.front().Options;
  auto corpus = readCorpusDescription(first.CorpusDir);
  if (!corpus)
    return corpus.takeError();
  auto plan = planModules(*corpus, first.CorpusDir, first.Selection);
  if (!plan)
    return plan.takeError();
  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return llvm::createStringError(ec, "cannot create %s: %s", outputDir.c_str(), ec.message().c_str());

  BatchResult result;
  result.Policies = policies.size();
  std::vector<std::string> runErrors(policies.size());
  for (size_t k = 0; k < policies.size() && !result.Interrupted && !result.Stopped; ++k) {
    BatchPolicy &p = policies[k];
    p.Options.OutputDir = batchPolicyDir(outputDir, k);
    p.Options.BaselineCacheDir = baselineCache.empty() ? joinPath(outputDir, "baselines") : baselineCache;
    if (baselineCache.empty())
      if (llvm::Error e = makeDirectoriesBeneath(outputDir, "baselines"))
        return std::move(e);
    if (!p.SetupError.empty()) {
      log::error("policy " + std::to_string(k) + " (" + p.Spec + ") cannot run: " + p.SetupError);
      continue;
    }
    log::info("policy " + std::to_string(k) + " of " + std::to_string(policies.size()) + ": " + p.Spec + " into " +
              p.Options.OutputDir);
    // Below OUT nothing is followed: OUT/policies or a policy's directory
    // planted as a link would send its harvest elsewhere.
    if (llvm::Error e = makeDirectoriesBeneath(outputDir, "policies/" + std::to_string(k)))
      return std::move(e);
    bool finishingCommit = false;
    if (explore.Trajectories) {
      auto state = explorationState(p.Options.OutputDir);
      if (!state)
        return state.takeError();
      // Its base harvest and exploration finished in an earlier run; the
      // harvest would rewrite summary.json without the exploration.
      if (*state == ExplorationState::Complete) {
        llvm::consumeError(removeFinishedCommit(p.Options.OutputDir, /*lock=*/true));
        log::info("policy " + std::to_string(k) + " (" + p.Spec + "): explored by an earlier run (explore.jsonl)");
        continue;
      }
      // Killed while it installed its result: installed again, no base harvest.
      finishingCommit = *state == ExplorationState::Committing;
    }
    ExploreSettings exploring = explore; // this policy's (prepareBaseHarvest notes its --keep_objects)
    if (explore.Trajectories)
      prepareBaseHarvest(p.Options, exploring);
    if (finishingCommit) {
      runErrors[k] = explorePolicy(p, exploring, result);
      if (!runErrors[k].empty())
        log::error("policy " + std::to_string(k) + " (" + p.Spec + "): " + runErrors[k]);
      continue;
    }
    auto summary = runHarvest(p.Options);
    if (!summary) {
      runErrors[k] = llvm::toString(summary.takeError());
      log::error("policy " + std::to_string(k) + " (" + p.Spec + "): " + runErrors[k]);
      continue;
    }
    result.BaselinesComputed += summary->BaselinesComputed;
    result.BaselinesCached += summary->BaselinesCached;
    result.BaselinesStored += summary->BaselinesStored;
    result.Interrupted = summary->Interrupted;
    result.Stopped = summary->Stopped;
    if (explore.Trajectories && !result.Interrupted && !result.Stopped) {
      runErrors[k] = explorePolicy(p, exploring, result);
      if (!runErrors[k].empty())
        log::error("policy " + std::to_string(k) + " (" + p.Spec + "): " + runErrors[k]);
    }
  }

  // The table: one cell per policy and planned module, from each harvest's
  // journal (what a resumed or earlier run finished counts too).
  std::string table;
  nlohmann::ordered_json totals = nlohmann::ordered_json::array();
  for (size_t k = 0; k < policies.size(); ++k) {
    const BatchPolicy &p = policies[k];
    std::string error = !p.SetupError.empty() ? p.SetupError : runErrors[k];
    std::map<std::string, HarvestRecord> records;
    // Its directory through no link below OUT: a policy this run did not
    // reach (interrupted before it) was never made or checked.
    if (error.empty())
      if (auto dir = openBeneath(outputDir, "policies/" + std::to_string(k), O_RDONLY | O_DIRECTORY); !dir) {
        llvm::Error e = dir.takeError();
        if (!consumeIfMissing(e))
          error = llvm::toString(std::move(e));
      }
    if (error.empty()) {
      auto journal = readHarvestJournal(harvestJournalPath(p.Options.OutputDir));
      if (!journal)
        error = llvm::toString(journal.takeError());
      else
        for (HarvestJournalLine &line : journal->Latest)
          records[line.Record.Module] = std::move(line.Record);
    }
    size_t ok = 0, failed = 0, missing = 0, decisions = 0, rewarded = 0;
    uint64_t size = 0, defaultSize = 0;
    double rewardSum = 0;
    for (const PlannedModule &module : *plan) {
      nlohmann::ordered_json cell = {{"policy", p.Spec}, {"policy_index", k}, {"module", module.Name}};
      auto it = records.find(module.Name);
      if (!error.empty()) {
        cell["status"] = "failed", cell["reason"] = "policy_failed", cell["detail"] = error;
        ++failed;
      } else if (it == records.end()) {
        cell["status"] = "missing", cell["detail"] = "not harvested (interrupted, or another shard's)";
        ++missing;
      } else {
        const HarvestRecord &r = it->second;
        cell["status"] = r.Status;
        if (!r.ok())
          cell["reason"] = r.Reason, cell["detail"] = r.Detail;
        cell["decisions"] = r.Decisions;
        cell["native_size"] = r.NativeSize ? nlohmann::ordered_json(*r.NativeSize) : nullptr;
        cell["default_size"] = r.DefaultSize ? nlohmann::ordered_json(*r.DefaultSize) : nullptr;
        cell["reward"] = r.Reward ? nlohmann::ordered_json(*r.Reward) : nullptr;
        if (r.ok()) {
          ++ok;
          decisions += r.Decisions;
          size += r.NativeSize.value_or(0);
          // The default policy is its own baseline.
          defaultSize += r.DefaultSize.value_or(r.NativeSize.value_or(0));
          if (r.Reward)
            rewardSum += *r.Reward, ++rewarded;
        } else {
          ++failed;
        }
      }
      result.Cells += 1;
      result.FailedCells += cell["status"] != "ok";
      table += cell.dump() + "\n";
    }
    result.FailedPolicies += !error.empty();
    nlohmann::ordered_json total = {{"policy", p.Spec},
                                    {"policy_index", k},
                                    {"directory", p.Options.OutputDir},
                                    {"ok", ok},
                                    {"failed", failed},
                                    {"missing", missing},
                                    {"decisions", decisions},
                                    {"native_size", size},
                                    {"default_size", defaultSize},
                                    {"size_change", defaultSize ? static_cast<double>(size) / defaultSize - 1 : 0.0},
                                    {"mean_reward", rewarded ? nlohmann::ordered_json(rewardSum / rewarded) : nullptr},
                                    {"error", error}};
    if (explore.Trajectories)
      total["explore"] = recordedEntry(p, "explore");
    totals.push_back(std::move(total));
  }
  if (llvm::Error e = writeFileAtomically(joinPath(outputDir, "evaluation.jsonl"), table))
    return e;
  if (policies.front().Options.Link.requested())
    result.LinksNotMade = addLinkedSizes(policies, totals);
  nlohmann::ordered_json summary = {{"modules", plan->size()},
                                    {"policies", totals},
                                    {"cells", result.Cells},
                                    {"failed_cells", result.FailedCells},
                                    {"baselines",
                                     {{"computed", result.BaselinesComputed},
                                      {"cached", result.BaselinesCached},
                                      {"stored", result.BaselinesStored}}},
                                    {"interrupted", result.Interrupted}};
  if (llvm::Error e = writeFileAtomically(joinPath(outputDir, "evaluation.json"), summary.dump(2) + "\n"))
    return e;
  return result;
}

} // namespace mlgo
