// A harvest and the link of its objects (--link, docs/harvest-linking.md):
// the pass (Harvester.h) keeps each module's object, and once every module
// is compiled the objects are linked in the corpus' order with the user's
// template (evaluate/LinkStep.h); the default policy's linked size is kept
// in --baseline_cache for other policies to be compared with.
#pragma once

#include "mlgo/evaluate/LinkStep.h"
#include "mlgo/harvest/Harvester.h"

#include "llvm/Support/Error.h"

namespace mlgo {

/// Runs the whole harvest: the pass, and its link when options.Link asks
/// (the link order is checked before anything is compiled). An Error means
/// the job could not start (corpus unreadable, output not writable,
/// compiler unusable); per-module failures are in the journal and the
/// summary.
llvm::Expected<HarvestSummary> runHarvest(const HarvestOptions &options);

/// --link again over options.OutputDir's staged objects, as the harvest's
/// link step makes it (order, modules that are not ok), from the journal's
/// latest records: --explore links its kept trajectories' objects so.
llvm::Expected<LinkResult> relinkHarvest(const HarvestOptions &options);

} // namespace mlgo
