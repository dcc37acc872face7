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
    // find(), not operator[]: a record (a shard's journal is input) may lack a field.
    auto size = j.find("native_size");
    if (problem == Problem::Inliner && (size == j.end() || !size->is_number() || size->get<double>() <= 0))
      continue;
    DatasetInput input{log, {}};
    auto reward = j.find("reward");
    if (isRegalloc(problem))
      input.Reward.How = RewardPolicy::Mode::Score;
    else if (reward != j.end() && reward->is_number()) {
      input.Reward.How = RewardPolicy::Mode::Constant;
      input.Reward.Value = static_cast<float>(reward->get<double>());
    }
    inputs.push_back(std::move(input));
  }
  return inputs;
}

} // namespace mlgo
