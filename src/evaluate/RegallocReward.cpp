#include "mlgo/evaluate/RegallocReward.h"

#include "mlgo/log/TrainingLog.h"
#include "mlgo/support/OutputFile.h"

#include "llvm/Remarks/Remark.h"
#include "llvm/Remarks/RemarkParser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace mlgo {

llvm::Expected<std::map<std::string, double>> regallocScores(llvm::StringRef remarksPath) {
  // llc creates the file even when it has no remark to write, so a missing
  // file means the rewards cannot be trusted, not "no spills".
  auto buffer = llvm::MemoryBuffer::getFile(remarksPath, /*IsText=*/true, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "remarks file %s: %s", remarksPath.str().c_str(),
                                   buffer.getError().message().c_str());
  auto parser = llvm::remarks::createRemarkParser(llvm::remarks::Format::YAML, (*buffer)->getBuffer());
  if (!parser)
    return llvm::createStringError("remarks file %s: %s", remarksPath.str().c_str(),
                                   llvm::toString(parser.takeError()).c_str());
  static const std::map<llvm::StringRef, double> Weights = {{"TotalSpillsCost", 1.0},
                                                            {"TotalReloadsCost", 4.0},
                                                            {"TotalFoldedSpillsCost", 1.0},
                                                            {"TotalFoldedReloadsCost", 4.0},
                                                            {"TotalCopiesCost", 0.2}};
  std::map<std::string, double> scores;
  while (true) {
    llvm::Expected<std::unique_ptr<llvm::remarks::Remark>> remark = (*parser)->next();
    if (!remark) {
      llvm::Error error = remark.takeError();
      if (error.isA<llvm::remarks::EndOfFileError>()) {
        llvm::consumeError(std::move(error));
        return scores;
      }
      return llvm::createStringError("remarks file %s: %s", remarksPath.str().c_str(),
                                     llvm::toString(std::move(error)).c_str());
    }
    if ((*remark)->RemarkName != "SpillReloadCopies" || (*remark)->FunctionName.empty())
      continue;
    double score = 0;
    for (const llvm::remarks::Argument &argument : (*remark)->Args) {
      auto weight = Weights.find(argument.Key);
      if (weight == Weights.end())
        continue;
      double cost = 0;
      // A reward must be a number: "nan", "inf" or a sum that overflows is refused.
      if (argument.Val.getAsDouble(cost) || !std::isfinite(cost))
        return llvm::createStringError("remarks file %s: function %s: %s is not a finite number: '%s'",
                                       remarksPath.str().c_str(), (*remark)->FunctionName.str().c_str(),
                                       argument.Key.str().c_str(), argument.Val.str().c_str());
      score += weight->second * cost;
    }
    double &total = scores[(*remark)->FunctionName.str()];
    total += score;
    if (!std::isfinite(total))
      return llvm::createStringError("remarks file %s: function %s: its spill and copy costs overflow a double",
                                     remarksPath.str().c_str(), (*remark)->FunctionName.str().c_str());
  }
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
