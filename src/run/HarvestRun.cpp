#include "mlgo/run/HarvestRun.h"

#include "mlgo/harvest/HarvestLink.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include <cstdio>

namespace mlgo {

int runHarvestLogs(HarvestRunRequest request, llvm::StringRef exploreOrder) {
  HarvestOptions &o = request.Options;
  std::vector<BatchPolicy> &batch = request.Batch;
  ExploreSettings &exploration = request.Exploration;
  const bool explore = exploration.Trajectories > 0, strict = request.Strict;
  bool finishingCommit = false;
  if (explore) {
    if (llvm::Error e = parseExploreOrder(exploreOrder, exploration)) {
      log::error(llvm::toString(std::move(e)));
      return 2;
    }
    // Every base policy of a batch, or the one.
    for (const BatchPolicy &p : batch)
      if (std::string why = explorationUnsupported(p.Options, exploration); !why.empty()) {
        log::error("--explore: policy " + p.Spec + ": " + why);
        return 2;
      }
    if (batch.empty())
      if (std::string why = explorationUnsupported(o, exploration); !why.empty()) {
        log::error("--explore: " + why);
        return 2;
      }
  }

  if (!batch.empty()) {
    for (BatchPolicy &p : batch)
      p.Options.UseCompileServer = o.UseCompileServer, p.Options.CompileServerReason = o.CompileServerReason;
    auto result = runPolicyBatch(std::move(batch), o.OutputDir, o.BaselineCacheDir, exploration);
    if (!result) {
      log::error(llvm::toString(result.takeError()));
      return 1;
    }
    log::info(std::to_string(result->Policies) + " policies (" + std::to_string(result->FailedPolicies) +
              " could not run), " + std::to_string(result->Cells) + " cells, " + std::to_string(result->FailedCells) +
              " not ok. Table: " + joinPath(o.OutputDir, "evaluation.jsonl"));
    if (result->Stopped) {
      log::error("stopped: " + *result->Stopped + ". Run the same command again to resume.");
      return 1;
    }
    if (result->Interrupted) {
      log::warning("interrupted: finished modules are recorded. Run the same command again to resume.");
      return InterruptedExitCode;
    }
    if (result->LinksNotMade) {
      log::error("--link: " + std::to_string(result->LinksNotMade) +
                 " policies have no linked binary (evaluation.json's linked says why)");
      return LinkNotMadeExitCode;
    }
    return strict && result->FailedCells ? 3 : 0;
  }

  if (explore) {
    // --tfrecord holds the kept trajectories, in ml-compiler-opt's imitation
    // format: written after the exploration, not by the base harvest.
    exploration.TrajectoryTFRecord = o.TFRecordPath;
    o.TFRecordPath.clear();
    // The base logs are replaced by the kept ones: a second run would explore from those.
    auto state = explorationState(o.OutputDir);
    if (!state) {
      log::error("--explore: " + llvm::toString(state.takeError()));
      return 1;
    }
    if (*state == ExplorationState::Complete) {
      llvm::consumeError(removeFinishedCommit(o.OutputDir, /*lock=*/true));
      log::error("--explore: " + o.OutputDir + " already holds an exploration (explore.jsonl): use a new --output_dir");
      return 2;
    }
    finishingCommit = *state == ExplorationState::Committing;
    prepareBaseHarvest(o, exploration);
  }

  // A run killed while it installed an exploration's result: that result is
  // installed again, with no base harvest (whose logs are partly replaced).
  auto summary = finishingCommit ? llvm::Expected<HarvestSummary>(HarvestSummary()) : runHarvest(o);
  if (!summary) {
    log::error(llvm::toString(summary.takeError()));
    return 1;
  }
  if (!finishingCommit) {
    char rate[64];
    std::snprintf(rate, sizeof(rate), "%.0f", summary->Seconds > 0 ? summary->Decisions / summary->Seconds : 0.0);
    log::info(std::to_string(summary->Ok) + " of " + std::to_string(summary->Planned) + " modules ok (" +
              std::to_string(summary->WithoutLog) + " without decisions, so without a log), " +
              std::to_string(summary->Failed) + " failed, " + std::to_string(summary->TimedOut) + " timed out; " +
              std::to_string(summary->Decisions) + " decisions this run (" + rate +
              "/s). Journal: " + harvestJournalPath(o.OutputDir));
    if (summary->Stopped) {
      log::error("stopped: " + *summary->Stopped +
                 ". Finished modules are recorded; free space and run the same "
                 "command again to resume.");
      return 1;
    }
    if (summary->Interrupted) {
      log::warning("interrupted: finished modules are recorded. Run the same command again to resume.");
      return InterruptedExitCode;
    }
  }
  // Exploring goes on without the base's link: the kept trajectories' link then says why too.
  if (summary->Linked && !summary->Linked->ok() && !explore)
    return LinkNotMadeExitCode;
  if (explore) {
    auto explored = runExploration(o, exploration);
    if (!explored) {
      log::error("--explore: " + llvm::toString(explored.takeError()));
      return 1;
    }
    if (explored->Stopped || explored->Interrupted) {
      log::error("--explore: " + (explored->Stopped ? "stopped: " + *explored->Stopped : std::string("interrupted")) +
                 ". The base harvest is complete; nothing explored was kept");
      return explored->Interrupted ? InterruptedExitCode : 1;
    }
    log::info("--explore: " + std::to_string(explored->Explored) + " explored trajectories (" +
              std::to_string(explored->FailedTrajectories) + " failed) over " + std::to_string(explored->Modules) +
              " modules; " + std::to_string(explored->Improved) + " improved; total native size " +
              std::to_string(explored->BaseTotalSize) + " -> " + std::to_string(explored->KeptTotalSize) +
              ". Table: " + joinPath(o.OutputDir, "explore.jsonl"));
    if (explored->Linked && !*explored->Linked)
      return LinkNotMadeExitCode;
    if (finishingCommit)
      summary->Failed = explored->BaseFailed, summary->TimedOut = explored->BaseTimedOut;
  }
  if (strict && (summary->Failed || summary->TimedOut))
    return 3;
  return 0;
}

} // namespace mlgo
