#include "mlgo/log/LogDataset.h"

#include "mlgo/log/SequenceExample.h"

#include <map>
#include <optional>

namespace mlgo {
namespace {

SequenceExampleBuilder::Kind kindOf(const TensorSpec &spec) {
  return isFloatingPoint(spec.Type) ? SequenceExampleBuilder::Kind::Float : SequenceExampleBuilder::Kind::Int64;
}

void appendTensor(SequenceExampleBuilder &builder, size_t list, const TensorSpec &spec, llvm::StringRef bytes) {
  size_t n = spec.elementCount();
  if (isFloatingPoint(spec.Type)) {
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i)
      values[i] = static_cast<float>(spec.elementAsDouble(bytes, i));
    builder.appendFloat(list, values);
  } else {
    std::vector<int64_t> values(n);
    for (size_t i = 0; i < n; ++i)
      values[i] = spec.elementAsInt(bytes, i);
    builder.appendInt64(list, values);
  }
}

struct ContextRecord {
  SequenceExampleBuilder Builder;
  std::vector<size_t> FeatureLists;
  std::optional<size_t> ScoreList;
  size_t RewardList = 0;
};

} // namespace

llvm::Expected<RewardPolicy> RewardPolicy::parse(llvm::StringRef text) {
  RewardPolicy policy;
  llvm::StringRef t = text;
  if (t == "zero")
    return policy;
  if (t == "score") {
    policy.How = Mode::Score;
    return policy;
  }
  if (t.consume_front("constant:")) {
    double value;
    if (!t.getAsDouble(value)) {
      policy.How = Mode::Constant;
      policy.Value = static_cast<float>(value);
      return policy;
    }
  }
  return llvm::createStringError("--reward must be zero, score or constant:X, not '%s'", text.str().c_str());
}

llvm::Expected<std::vector<DatasetRecord>> logToSequenceExamples(TrainingLogReader &reader,
                                                                 const RewardPolicy &reward) {
  std::vector<std::string> order;
  std::map<std::string, ContextRecord> contexts;
  std::optional<LogHeader> first;
  ContextRecord *current = nullptr;
  // The last observation's reward is written once we know whether an
  // outcome follows it.
  float pendingScore = 0;
  bool pending = false;

  auto flushReward = [&] {
    if (!pending || !current)
      return;
    float value = reward.How == RewardPolicy::Mode::Constant ? reward.Value
                  : reward.How == RewardPolicy::Mode::Score  ? pendingScore
                                                             : 0.0f;
    current->Builder.appendFloat(current->RewardList, {value});
    pending = false;
    pendingScore = 0;
  };

  while (true) {
    auto event = reader.next();
    if (!event)
      return event.takeError();
    if (*event != TrainingLogReader::Event::Outcome)
      flushReward();
    if (*event == TrainingLogReader::Event::End)
      break;
    const LogHeader &header = reader.header();
    switch (*event) {
    case TrainingLogReader::Event::Header:
      if (!first) {
        first = header;
        if (reward.How == RewardPolicy::Mode::Score && !header.Score)
          return llvm::createStringError("%s: --reward=score, but the log has no score", reader.name().c_str());
      } else if (first->toLine() != header.toLine()) {
        return llvm::createStringError("%s: stream %zu has a different header from the first", reader.name().c_str(),
                                       reader.streams());
      }
      current = nullptr;
      break;
    case TrainingLogReader::Event::Context: {
      auto [it, isNew] = contexts.try_emplace(reader.context());
      current = &it->second;
      if (isNew) {
        order.push_back(reader.context());
        for (const TensorSpec &spec : header.Features)
          current->FeatureLists.push_back(current->Builder.list(spec.Name, kindOf(spec)));
        if (header.Score && header.Score->Name != "reward")
          current->ScoreList = current->Builder.list(header.Score->Name, kindOf(*header.Score));
        current->RewardList = current->Builder.list("reward", SequenceExampleBuilder::Kind::Float);
      }
      break;
    }
    case TrainingLogReader::Event::Observation:
      for (size_t i = 0; i < header.Features.size(); ++i)
        appendTensor(current->Builder, current->FeatureLists[i], header.Features[i], reader.feature(i));
      pending = true;
      break;
    case TrainingLogReader::Event::Outcome:
      if (current->ScoreList)
        appendTensor(current->Builder, *current->ScoreList, *header.Score, reader.outcome());
      pendingScore = static_cast<float>(header.Score->elementAsDouble(reader.outcome(), 0));
      flushReward();
      break;
    case TrainingLogReader::Event::End:
      break;
    }
  }

  std::vector<DatasetRecord> records;
  bool inliner = first && detectProblem(*first) == Problem::Inliner;
  for (const std::string &name : order) {
    ContextRecord &record = contexts[name];
    size_t steps = record.Builder.steps(record.RewardList);
    if (steps == 0)
      continue; // a context without observations makes no example
    records.push_back({inliner ? std::string("default") : name, record.Builder.serialize(), steps});
  }
  return records;
}

} // namespace mlgo
