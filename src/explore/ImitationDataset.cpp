#include "mlgo/explore/ImitationDataset.h"

#include "mlgo/log/SequenceExample.h"
#include "mlgo/log/TFRecord.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/support/AtomicFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace mlgo {
namespace {

constexpr double Thresholds[] = {285.0,  376.0,  452.0,  512.0,  571.0,  627.5,   720.0,   809.5,   1304.0,  1832.0,
                                 2467.0, 3344.0, 4545.0, 6459.0, 9845.0, 17953.0, 29430.5, 85533.5, 124361.0};

// One module's kept trajectory as one SequenceExample.
llvm::Expected<std::string> trajectoryRecord(const ImitationModule &module, size_t &steps) {
  SequenceExampleBuilder example;
  std::vector<std::pair<size_t, size_t>> columns; // (log feature, list)
  std::optional<size_t> decision;
  size_t action = 0, reward = 0, name = 0, label = 0, policyLabel = 0;
  const float loss = static_cast<float>(module.KeptSize);
  const int64_t bucket = imitationSizeBucket(static_cast<double>(module.KeptSize));
  steps = 0;
  auto visitKept = [&](const auto &visit) {
    return module.Below.empty() ? visitLog(module.KeptLog, visit)
                                : visitLogBeneath(module.Below, module.KeptLogBelow, visit);
  };
  llvm::Error error = visitKept([&](TrainingLogReader &reader, TrainingLogReader::Event event) -> llvm::Error {
    const LogHeader &header = reader.header();
    if (event == TrainingLogReader::Event::Header && columns.empty() && !decision) {
      decision = header.find("inlining_decision");
      if (!decision)
        return llvm::createStringError("%s has no inlining_decision: not an inliner log", module.KeptLog.c_str());
      for (size_t i = 0; i < header.Features.size(); ++i) {
        const TensorSpec &spec = header.Features[i];
        if (i != *decision && spec.Type == ElementType::Int64 && spec.elementCount() == 1)
          columns.emplace_back(i, example.list(spec.Name, SequenceExampleBuilder::Kind::Int64));
      }
      action = example.list("action", SequenceExampleBuilder::Kind::Int64);
      reward = example.list("reward", SequenceExampleBuilder::Kind::Float);
      name = example.list("module_name", SequenceExampleBuilder::Kind::Bytes);
      label = example.list("label", SequenceExampleBuilder::Kind::Int64);
      // Required by ml-compiler-opt's trainer (and dropped by it).
      policyLabel = example.list("policy_label", SequenceExampleBuilder::Kind::Int64);
    }
    if (event != TrainingLogReader::Event::Observation)
      return llvm::Error::success();
    for (auto [feature, list] : columns)
      example.appendInt64(list, {header.Features[feature].elementAsInt(reader.feature(feature), 0)});
    example.appendInt64(action, {header.Features[*decision].elementAsInt(reader.feature(*decision), 0) != 0});
    example.appendFloat(reward, {loss});
    example.appendBytes(name, {llvm::StringRef(module.Name)});
    example.appendInt64(label, {bucket});
    example.appendInt64(policyLabel, {0});
    ++steps;
    return llvm::Error::success();
  });
  if (error)
    return std::move(error);
  if (steps != module.KeptHorizon)
    return llvm::createStringError("%s holds %zu decisions, its trajectory %zu", module.KeptLog.c_str(), steps,
                                   module.KeptHorizon);
  return example.serialize();
}

std::string profile(const std::vector<ImitationModule> &modules, bool kept) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ImitationModule &m : modules)
    if (m.KeptHorizon > 0)
      list.push_back({{"module_name", m.Name},
                      {"loss", static_cast<double>(kept ? m.KeptSize : m.BaseSize)},
                      {"horizon", kept ? m.KeptHorizon : m.BaseHorizon}});
  return list.dump(2) + "\n";
}

} // namespace

llvm::ArrayRef<double> imitationSizeThresholds() { return Thresholds; }

int64_t imitationSizeBucket(double loss) {
  return std::upper_bound(std::begin(Thresholds), std::end(Thresholds), loss) - std::begin(Thresholds);
}

llvm::Expected<ImitationTotals> writeImitationTrajectories(const std::vector<ImitationModule> &modules,
                                                           llvm::StringRef path) {
  AtomicFileWriter file;
  if (llvm::Error e = file.open(path))
    return std::move(e);
  ImitationTotals totals;
  std::string framed;
  for (const ImitationModule &module : modules) {
    if (module.KeptHorizon == 0) {
      ++totals.SkippedWithoutDecisions;
      continue;
    }
    size_t steps = 0;
    auto record = trajectoryRecord(module, steps);
    if (!record)
      return record.takeError();
    framed.clear();
    appendTFRecord(framed, *record);
    if (llvm::Error e = file.write(framed))
      return std::move(e);
    ++totals.Records;
    totals.Steps += steps;
  }
  if (llvm::Error e = file.commit())
    return std::move(e);
  return totals;
}

llvm::Error writeImitationProfiles(const std::vector<ImitationModule> &modules, llvm::StringRef prefix) {
  if (llvm::Error e = writeFileAtomically((prefix + "_max.json").str(), profile(modules, true)))
    return e;
  return writeFileAtomically((prefix + "_pol.json").str(), profile(modules, false));
}

} // namespace mlgo
