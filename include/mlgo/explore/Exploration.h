// explore/: trajectories around a harvest's base (rounds, fork chains, the
// commit of the kept ones, explored shards, the imitation dataset); uses
// harvest/ and below.
//
// harvest-logs --explore=K: after the base harvest, up to K more
// trajectories per module, each replaying the newest one up to a step,
// flipping that step and following the base policy afterwards
// (ml-compiler-opt's imitation-learning chain; or per-decision rollouts of
// the base, or a search of them: rollouts:ORDER, search:ORDER); the
// smallest native size is kept. Each round of explorations is an ordinary harvest with
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
  /// rollouts:ORDER: every explored trajectory flips a step of the base
  /// trajectory and follows the base policy after it (a per-decision
  /// rollout), the steps taken in ORDER (the base's least certain first,
  /// first to last, or a seeded permutation), K at most per module. Without
  /// it, each flips a step after the previous flip in the newest trajectory
  /// (ml-compiler-opt's chain).
  bool Rollouts = false;
  /// search:ORDER: rollouts in sweeps: once every step of the parent (at
  /// first the base) is rolled out, the smallest rollout, when it is
  /// smaller than its parent, becomes the next sweep's parent; the search
  /// ends when a sweep finds nothing smaller or K trajectories were spent.
  bool Search = false;
  /// --tfrecord: the kept trajectories in ml-compiler-opt's imitation format
  /// (ImitationDataset.h); "" : none.
  std::string TrajectoryTFRecord;
  /// --link: the user's --keep_objects (the base harvest keeps its objects
  /// for the kept trajectories' link either way: prepareBaseHarvest).
  bool KeepObjects = false;
  /// --explore_fork: the base compiles fork the explored trajectories
  /// where they can (prepareBaseHarvest, ExplorationChain.h).
  bool Fork = true;
  std::string describeOrder() const;
};

/// "uncertain", "first" or "random:SEED", each optionally after "rollouts:"
/// or "search:" ("rollouts" or "search" alone: with "uncertain").
llvm::Error parseExploreOrder(llvm::StringRef text, ExploreSettings &settings);

/// Why `options` cannot be explored as `settings` say ("" when they can):
/// the inliner, a default, random:P:SEED or tflite: base policy;
/// uncertain needs the base policy's certainty (the default heuristic's in
/// plugin mode, or a tflite: policy's logits).
std::string explorationUnsupported(const HarvestOptions &options, const ExploreSettings &settings);

/// What the base harvest must also write for `settings`: the sites files
/// (cost_margin) when the default heuristic's certainty orders the steps;
/// with --link, its objects, which the kept trajectories' link needs; with
/// --explore_fork, the fork chains its plugin compiles can run.
void prepareBaseHarvest(HarvestOptions &options, ExploreSettings &settings);

struct ExploreResult {
  size_t Modules = 0, Explored = 0, FailedTrajectories = 0, Improved = 0;
  size_t Forked = 0; // explored trajectories taken from the base compiles' fork chains
  uint64_t BaseTotalSize = 0, KeptTotalSize = 0;
  std::optional<bool> Linked; // --link: whether the kept trajectories' program was linked
  bool Interrupted = false;
  std::optional<std::string> Stopped;
  /// The base harvest's failed and timed-out modules (its summary.json), for
  /// --strict when a run only finished an earlier one's commit.
  size_t BaseFailed = 0, BaseTimedOut = 0;
};

/// Where an output directory stands: no exploration (or one still
/// exploring), one killed while it installed its result (OUT/explore/commit/:
/// the same command finishes it without a base harvest or rounds), or a
/// complete one (explore.jsonl, no commit).
enum class ExplorationState { None, Committing, Complete };
llvm::Expected<ExplorationState> explorationState(const std::string &outputDir);
/// Removes what a complete exploration killed just after it finished left
/// (OUT/explore/commit.done). With `lock`, takes OUT's lock first (and does
/// nothing when another run holds it).
llvm::Error removeFinishedCommit(const std::string &outputDir, bool lock = false);

/// Explores every module the base harvest in options.OutputDir finished ok;
/// keeps each module's smallest trajectory in logs/<m>.log (and a journal
/// record for it), writes OUT/explore.jsonl and adds `explore` to
/// OUT/summary.json. With --link, links the kept trajectories' objects into
/// OUT/link/linked (summary.json's `linked` then describes that program,
/// and `explore.linked` compares it with the base's). An Error means a round could not run at all.
llvm::Expected<ExploreResult> runExploration(const HarvestOptions &options, const ExploreSettings &settings);

} // namespace mlgo
