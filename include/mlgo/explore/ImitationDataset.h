// ml-compiler-opt's imitation-learning files, written from an exploration
// (harvest-logs --explore): the kept trajectories as its trainer reads them
// (TFRecord of SequenceExample: every int64 feature, `action`, `reward`,
// `module_name`, `label`, `policy_label`, one entry per step) and its
// `_max` / `_pol` profiles (the kept and the base trajectory's size and
// horizon per module). shared/specs/imitation-learning.md, sections 3-5.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlgo {

/// ml-compiler-opt's 19 size thresholds (bytes) of the imitation-learning
/// configuration; a loss equal to one goes to the upper bucket.
llvm::ArrayRef<double> imitationSizeThresholds();
/// The bucket (0..19) of `loss`: how many thresholds are <= it.
int64_t imitationSizeBucket(double loss);

struct ImitationModule {
  std::string Name;
  std::string KeptLog; // the kept trajectory's training log
  uint64_t KeptSize = 0, BaseSize = 0;
  size_t KeptHorizon = 0, BaseHorizon = 0; // decisions
  /// When set, the log is read as KeptLogBelow below the harvest `Below`,
  /// through no symbolic link (BeneathPath.h); KeptLog names it in messages.
  std::string Below, KeptLogBelow;
};

struct ImitationTotals {
  size_t Records = 0, Steps = 0, SkippedWithoutDecisions = 0;
};

/// Writes the kept trajectories of `modules` (in order) to `path`,
/// atomically. Modules without decisions are left out, as ml-compiler-opt
/// makes no trajectory of them (counted). Only int64 scalar features are
/// written (a wider column would break one entry per step).
llvm::Expected<ImitationTotals> writeImitationTrajectories(const std::vector<ImitationModule> &modules,
                                                           llvm::StringRef path);

/// PREFIX_max.json (kept) and PREFIX_pol.json (base): JSON arrays of
/// {"module_name", "loss", "horizon"}, modules with decisions only, in order.
llvm::Error writeImitationProfiles(const std::vector<ImitationModule> &modules, llvm::StringRef prefix);

} // namespace mlgo
