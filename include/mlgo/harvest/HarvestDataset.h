// Which harvested logs make the --tfrecord dataset, and with which reward:
// one rule for harvest-logs and merge-harvest, so a merged dataset is the
// one-machine run's.
#pragma once

#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/ModulePlan.h"
#include "mlgo/log/DatasetFile.h"
#include "mlgo/log/Problem.h"

#include <map>
#include <string>
#include <vector>

namespace mlgo {

/// `logs/<module>.log` and `logs/<module>.sites.jsonl`, relative to a
/// harvest's directory: opened below it with BeneathPath.h, so that no link
/// planted in the harvest is followed.
std::string harvestLogName(const std::string &module);
std::string harvestSitesName(const std::string &module);
/// `logs/<module>.log` under a harvest's output directory.
std::string harvestLogPath(llvm::StringRef outputDir, const std::string &module);
/// OUT/logs/<module>.sites.jsonl: which call site each observation of the
/// log was about (--decision_sites; decision_sites.schema.json).
std::string harvestSitesPath(llvm::StringRef outputDir, const std::string &module);

/// The logs under `outputDir` that the dataset holds, in plan order: modules
/// whose latest journal record (`records`, validated by the journal reader)
/// is ok with `log_written`; for the inliner, only with a non-zero native
/// size (ml-compiler-opt makes no example of those). A log the record
/// promises must exist: the dataset then fails naming it, never drops it. Rewards: regalloc, each function's score on
/// its last step; the inliner, the record's `reward` (none: 0).
std::vector<DatasetInput> harvestDatasetInputs(Problem problem, llvm::StringRef outputDir,
                                               const std::vector<PlannedModule> &plan,
                                               const std::map<std::string, const HarvestRecord *> &records);

} // namespace mlgo
