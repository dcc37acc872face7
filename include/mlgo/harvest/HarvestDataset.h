// Which harvested logs make the --tfrecord dataset, and with which reward:
// one rule for harvest-logs and merge-harvest, so a merged dataset is the
// one-machine run's.
#pragma once

#include "mlgo/harvest/ModulePlan.h"
#include "mlgo/log/DatasetFile.h"
#include "mlgo/log/Problem.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace mlgo {

/// `logs/<module>.log` under a harvest's output directory.
std::string harvestLogPath(llvm::StringRef outputDir, const std::string &module);

/// The logs under `outputDir` that the dataset holds, in plan order: modules
/// whose latest journal record (`records`) is ok and that have a log; for
/// the inliner, only with a non-zero native size (ml-compiler-opt makes no
/// example of those). Rewards: regalloc, each function's score on its last
/// step; the inliner, the record's `reward` (none: 0).
std::vector<DatasetInput> harvestDatasetInputs(Problem problem, llvm::StringRef outputDir,
                                               const std::vector<PlannedModule> &plan,
                                               const std::map<std::string, const nlohmann::ordered_json *> &records);

} // namespace mlgo
