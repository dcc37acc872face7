// The trajectories of a harvest (Trajectory.h's format) read back from its
// journal and logs: what `training-log trajectories` writes, and the
// decisions --explore replays from a parent harvest.
#pragma once

#include "mlgo/policy/Trajectory.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlgo {

/// What `training-log trajectories` wrote.
struct HarvestTrajectoryCount {
  size_t Modules = 0, Decisions = 0, FailedSkipped = 0;
};

/// The trajectory of every ok module of an inliner harvest directory, from
/// its journal and logs (inlining_decision of each observation; [] for a
/// module without decisions), in journal order, one trajectoryLine each.
/// Failed modules took no complete trajectory and are left out (counted).
llvm::Expected<HarvestTrajectoryCount> writeHarvestTrajectories(llvm::StringRef harvestDir, llvm::raw_ostream &os);

/// The decisions (inlining_decision of each observation) of an inliner log.
llvm::Expected<DecisionSequence> loggedDecisions(const std::string &logPath);
/// The same of `module`'s log in the harvest `harvestDir` (logs/<m>.log),
/// read through no symbolic link below the harvest (BeneathPath.h).
llvm::Expected<DecisionSequence> harvestedDecisions(llvm::StringRef harvestDir, const std::string &module);

} // namespace mlgo
