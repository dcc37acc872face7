// harvest-logs --policies=LIST: K policies (an evolution-strategies step's
// perturbations, say, plus `default`) over one module selection. Each policy
// is an ordinary harvest into OUT/policies/<k>/ (resumable and, sharded,
// mergeable with merge-harvest as any harvest), and all of them share one
// baseline cache, so each module's default size is compiled once for the
// batch. The table OUT/evaluation.jsonl has one cell per policy and module;
// OUT/evaluation.json the per-policy totals. With --explore, each policy is
// also explored as a base policy (Exploration.h) in its own directory, and
// its cells are its kept trajectories.
#pragma once

#include "mlgo/explore/Exploration.h"
#include "mlgo/harvest/Harvester.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlgo {

struct BatchPolicy {
  std::string Spec;       // as given, e.g. "tflite:step7/p3"
  HarvestOptions Options; // its harvest (output directory set by the batch)
  std::string SetupError; // why it cannot run at all ("" = it can): its cells fail
};

struct BatchResult {
  size_t Policies = 0, FailedPolicies = 0, Cells = 0, FailedCells = 0;
  size_t BaselinesComputed = 0, BaselinesCached = 0; // this run's, over all policies
  size_t BaselinesStored = 0;                        // by the default policy's harvest: its sizes are the baselines
  size_t LinksNotMade = 0;                           // --link: policies without a linked binary
  bool Interrupted = false;
  std::optional<std::string> Stopped;
};

/// OUT/policies/<k>: policy k's harvest directory.
std::string batchPolicyDir(const std::string &outputDir, size_t k);

/// Runs every policy's harvest in turn with the baseline cache `baselineCache`
/// (OUT/baselines when ""), then writes the table. A policy that cannot start
/// or whose harvest fails costs its own cells (status "failed", reason
/// "policy_failed"); an Error means the batch could not run at all. With
/// `explore` (K > 0), each policy's harvest is then explored, unless its
/// directory holds a finished exploration already (a rerun).
llvm::Expected<BatchResult> runPolicyBatch(std::vector<BatchPolicy> policies, const std::string &outputDir,
                                           const std::string &baselineCache, const ExploreSettings &explore = {});

} // namespace mlgo
