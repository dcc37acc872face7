#include "mlgo/harvest/RegallocReward.h"

#include "mlgo/log/TrainingLog.h"
#include "mlgo/support/OutputFile.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace mlgo {
namespace {

// A YAML scalar as LLVM's remark serializer writes it: plain, 'single' or
// "double" quoted.
std::string unquote(llvm::StringRef value) {
  value = value.trim();
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
    std::string out;
    llvm::StringRef inner = value.drop_front().drop_back();
    for (size_t i = 0; i < inner.size(); ++i) {
      out += inner[i];
      if (inner[i] == '\'' && i + 1 < inner.size() && inner[i + 1] == '\'')
        ++i;
    }
    return out;
  }
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    std::string out;
    llvm::StringRef inner = value.drop_front().drop_back();
    for (size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '\\' && i + 1 < inner.size())
        ++i;
      out += inner[i];
    }
    return out;
  }
  return value.str();
}

} // namespace

llvm::Expected<std::map<std::string, double>> regallocScores(llvm::StringRef remarksPath) {
  std::map<std::string, double> scores;
  auto buffer = llvm::MemoryBuffer::getFile(remarksPath, /*IsText=*/true, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return scores;
  static const std::map<std::string, double> Weights = {{"TotalSpillsCost", 1.0},
                                                        {"TotalReloadsCost", 4.0},
                                                        {"TotalFoldedSpillsCost", 1.0},
                                                        {"TotalFoldedReloadsCost", 4.0},
                                                        {"TotalCopiesCost", 0.2}};
  std::string name, function;
  double score = 0;
  auto flush = [&] {
    if (name == "SpillReloadCopies" && !function.empty())
      scores[function] += score;
    name.clear();
    function.clear();
    score = 0;
  };
  llvm::SmallVector<llvm::StringRef, 0> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (line.starts_with("---")) {
      flush();
      continue;
    }
    llvm::StringRef trimmed = line.ltrim(" -");
    auto [key, value] = trimmed.split(':');
    if (line.starts_with("Name:"))
      name = unquote(value);
    else if (line.starts_with("Function:"))
      function = unquote(value);
    else if (auto weight = Weights.find(key.trim().str()); weight != Weights.end())
      score += weight->second * std::strtod(unquote(value).c_str(), nullptr);
  }
  flush();
  return scores;
}

llvm::Expected<double> addRegallocRewards(llvm::StringRef rawLog, llvm::StringRef finalLog,
                                          const std::map<std::string, double> &scores) {
  // Pass 1: each function's observation count, to find its last one.
  std::map<std::string, int64_t> counts;
  if (llvm::Error e = visitLog(rawLog, [&](TrainingLogReader &reader, TrainingLogReader::Event event) {
        if (event == TrainingLogReader::Event::Observation)
          ++counts[reader.context()];
        return llvm::Error::success();
      }))
    return e;
  OutputFile out(finalLog); // its errors are returned, never a fatal error at destruction
  if (llvm::Error e = out.openError())
    return e;
  std::unique_ptr<TrainingLogWriter> writer;
  double total = 0;
  for (const auto &[function, score] : scores)
    total += score;
  // Pass 2: the same records, each observation followed by its outcome.
  llvm::Error copied = visitLog(rawLog, [&](TrainingLogReader &reader, TrainingLogReader::Event event) -> llvm::Error {
    if (event == TrainingLogReader::Event::Header && !writer) {
      LogHeader header = reader.header();
      header.Score = TensorSpec{"reward", ElementType::Float, {1}, 0};
      writer = std::make_unique<TrainingLogWriter>(out, std::move(header));
    } else if (event == TrainingLogReader::Event::Context) {
      writer->switchContext(reader.context());
    } else if (event == TrainingLogReader::Event::Observation) {
      const std::string &function = reader.context();
      if (llvm::Error e = writer->observationRaw({reader.observation()}))
        return e;
      float reward = 0;
      if (reader.observationIndex() + 1 == counts[function])
        if (auto it = scores.find(function); it != scores.end())
          reward = static_cast<float>(it->second);
      return writer->outcome(llvm::StringRef(reinterpret_cast<const char *>(&reward), sizeof(reward)));
    }
    return llvm::Error::success();
  });
  if (copied)
    return copied;
  if (llvm::Error e = out.finish())
    return e;
  return total;
}

} // namespace mlgo
