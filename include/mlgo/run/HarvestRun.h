// The run room (src/run/): what composes several harvests, at the top of
// the library's layers. harvest-logs' run once its flags are parsed and its
// modes chosen: a batch of policies (PolicyBatch.h), or one policy's
// harvest with its link (harvest/HarvestLink.h) and then, with --explore,
// its exploration (explore/Exploration.h); merge-harvest's merge of shards
// (HarvestMerge.h). Progress and failures go to the log.
#pragma once

#include "mlgo/explore/Exploration.h"
#include "mlgo/harvest/Harvester.h"
#include "mlgo/run/PolicyBatch.h"

#include "llvm/ADT/StringRef.h"

#include <vector>

namespace mlgo {

/// --link was given and the program could not be linked (summary.json says why).
constexpr int LinkNotMadeExitCode = 4;

struct HarvestRunRequest {
  HarvestOptions Options;         // one policy's harvest, or what a batch's policies share
  std::vector<BatchPolicy> Batch; // --policies: empty for one policy
  ExploreSettings Exploration;    // --explore (Trajectories 0: none) and --explore_fork
  bool Strict = false;            // --strict: exit 3 when a module failed or timed out
};

/// Runs `request` with --explore_order `exploreOrder`, and returns
/// harvest-logs' exit status: 0; 1 when the job could not run or stopped
/// (the rest resumes); 2 for flags that cannot go together; 3 with
/// --strict; 4 when --link made no program; 130 when interrupted.
int runHarvestLogs(HarvestRunRequest request, llvm::StringRef exploreOrder);

} // namespace mlgo
