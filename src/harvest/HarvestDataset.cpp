#include "mlgo/harvest/HarvestDataset.h"

#include "mlgo/support/PathUtil.h"

namespace mlgo {

std::string harvestLogName(const std::string &module) { return "logs/" + module + ".log"; }
std::string harvestSitesName(const std::string &module) { return "logs/" + module + ".sites.jsonl"; }

std::string harvestLogPath(llvm::StringRef outputDir, const std::string &module) {
  return joinPath(outputDir, harvestLogName(module));
}

std::string harvestSitesPath(llvm::StringRef outputDir, const std::string &module) {
  return joinPath(outputDir, harvestSitesName(module));
}

std::vector<DatasetInput> harvestDatasetInputs(Problem problem, llvm::StringRef outputDir,
                                               const std::vector<PlannedModule> &plan,
                                               const std::map<std::string, const HarvestRecord *> &records) {
  std::vector<DatasetInput> inputs;
  for (const PlannedModule &module : plan) {
    auto it = records.find(module.Name);
    if (it == records.end() || !it->second->hasLog())
      continue; // failed, or ok without decisions
    const HarvestRecord &r = *it->second;
    if (problem == Problem::Inliner && (!r.NativeSize || *r.NativeSize == 0))
      continue;
    DatasetInput input{harvestLogName(module.Name), {}, outputDir.str()};
    if (isRegalloc(problem))
      input.Reward.How = RewardPolicy::Mode::Score;
    else if (r.Reward) {
      input.Reward.How = RewardPolicy::Mode::Constant;
      input.Reward.Value = static_cast<float>(*r.Reward);
    }
    inputs.push_back(std::move(input));
  }
  return inputs;
}

} // namespace mlgo
