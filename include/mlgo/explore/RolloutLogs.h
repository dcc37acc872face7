// Per-decision rollouts beside the features: for --explore_order=rollouts:
// and search:, OUT/rollouts/<module>.log is the base trajectory's log with
// two more int64 [1] columns after its features, so that a trainer reads
// what each decision is worth where it reads the decision:
//   base_native_size     the base trajectory's native size (every step)
//   rollout_native_size  the native size of the trajectory that flips this
//                        step and follows the base policy; -1 where the step
//                        was not rolled out (the budget) or its rollout failed
// Beside it, OUT/rollouts/<module>.sites.jsonl is the base trajectory's
// sites file (each decision's call site and the default's cost_margin),
// which OUT/logs no longer holds once a flip was kept.
// Written before the exploration's commit is staged, while OUT/logs still
// holds the base's logs; training-log to-tfrecord and the Python package's
// read_log carry the columns as they carry every feature.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>

namespace mlgo {

/// One module's rollouts of its base trajectory.
struct ModuleRollouts {
  std::string Module;
  uint64_t BaseSize = 0;
  std::map<size_t, uint64_t> FlippedSize; // step -> native size, for the rollouts that succeeded
};

/// `rollouts/<module>.log`, relative to the harvest's directory.
std::string rolloutLogName(const std::string &module);

/// `rollouts/<module>.sites.jsonl`, relative to the harvest's directory.
std::string rolloutSitesName(const std::string &module);

/// Writes OUT/rollouts/<module>.log from OUT/logs/<module>.log (the base's,
/// read and written below OUT following no link), replacing it atomically,
/// and OUT/rollouts/<module>.sites.jsonl from the base's sites file when it
/// has one. A rollout of a step the log does not have is an error.
llvm::Error writeRolloutLog(llvm::StringRef outputDir, const ModuleRollouts &rollouts);

} // namespace mlgo
