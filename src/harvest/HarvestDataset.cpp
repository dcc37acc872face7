#include "mlgo/harvest/HarvestDataset.h"

#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"

namespace mlgo {

std::string harvestLogPath(llvm::StringRef outputDir, const std::string &module) {
  return joinPath(joinPath(outputDir, "logs"), module + ".log");
}

std::vector<DatasetInput> harvestDatasetInputs(Problem problem, llvm::StringRef outputDir,
                                               const std::vector<PlannedModule> &plan,
                                               const std::map<std::string, const nlohmann::ordered_json *> &records) {
  std::vector<DatasetInput> inputs;
  for (const PlannedModule &module : plan) {
    auto it = records.find(module.Name);
    if (it == records.end() || it->second->value("status", "") != "ok")
      continue;
    const nlohmann::ordered_json &j = *it->second;
    std::string log = harvestLogPath(outputDir, module.Name);
    if (!llvm::sys::fs::exists(log))
      continue; // a module without decisions
    if (problem == Problem::Inliner && (!j["native_size"].is_number() || j["native_size"].get<uint64_t>() == 0))
      continue;
    DatasetInput input{log, {}};
    if (isRegalloc(problem))
      input.Reward.How = RewardPolicy::Mode::Score;
    else if (j["reward"].is_number()) {
      input.Reward.How = RewardPolicy::Mode::Constant;
      input.Reward.Value = static_cast<float>(j["reward"].get<double>());
    }
    inputs.push_back(std::move(input));
  }
  return inputs;
}

} // namespace mlgo
