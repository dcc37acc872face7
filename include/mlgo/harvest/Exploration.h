// harvest-logs --explore=K: after the base harvest, up to K more
// trajectories per module, each replaying the newest one up to a step,
// flipping that step and following the base policy afterwards
// (ml-compiler-opt's imitation-learning chain); the smallest native size is
// kept. Each round of explorations is an ordinary harvest with
// --policy=replay: of that round's trajectories (Trajectory.h, `then`), in
// OUT/explore/round-<r>/, so it is measured, confined and journaled as any
// harvest, and a failed trajectory costs only itself.
#pragma once

#include "mlgo/harvest/Harvester.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlgo {

struct ExploreSettings {
  unsigned Trajectories = 0; // K: explored trajectories per module, at most
  /// Uncertain: the step the base policy was least sure of (StepCertainty.h);
  /// First: the next one; Random: uniformly drawn.
  enum class Order { Uncertain, First, Random } How = Order::Uncertain;
  uint64_t OrderSeed = 0; // random:SEED
  /// --tfrecord: the kept trajectories in ml-compiler-opt's imitation format
  /// (ImitationDataset.h); "" : none.
  std::string TrajectoryTFRecord;
  std::string describeOrder() const;
};

/// "uncertain", "first" or "random:SEED".
llvm::Error parseExploreOrder(llvm::StringRef text, ExploreSettings &settings);

/// Why `options` cannot be explored as `settings` say ("" when they can):
/// the inliner, a default, random:P:SEED or tflite: base policy, no --link;
/// uncertain needs the base policy's certainty (the default heuristic's in
/// plugin mode, or a tflite: policy's logits).
std::string explorationUnsupported(const HarvestOptions &options, const ExploreSettings &settings);

/// What the base harvest must also write for `settings`: the sites files
/// (cost_margin) when the default heuristic's certainty orders the steps.
void prepareBaseHarvest(HarvestOptions &options, const ExploreSettings &settings);

struct ExploreResult {
  size_t Modules = 0, Explored = 0, FailedTrajectories = 0, Improved = 0;
  uint64_t BaseTotalSize = 0, KeptTotalSize = 0;
  bool Interrupted = false;
  std::optional<std::string> Stopped;
};

/// Explores every module the base harvest in options.OutputDir finished ok;
/// keeps each module's smallest trajectory in logs/<m>.log (and a journal
/// record for it), writes OUT/explore.jsonl and adds `explore` to
/// OUT/summary.json. An Error means a round could not run at all.
llvm::Expected<ExploreResult> runExploration(const HarvestOptions &options, const ExploreSettings &settings);

} // namespace mlgo
