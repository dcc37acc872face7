// From training logs to the default-trace dataset that ml-compiler-opt's
// trainers read: one tf.train.SequenceExample per context.
#pragma once

#include "mlgo/log/Problem.h"
#include "mlgo/log/TrainingLog.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

struct RewardPolicy {
  enum class Mode {
    Zero,     // 0.0 per step, as default traces have (1 - (s+0.01)/(s+0.01))
    Constant, // Value per step
    Score,    // the logged outcome of each step (0.0 where there is none)
  };
  Mode How = Mode::Zero;
  float Value = 0;

  /// "zero", "score" or "constant:X" (training-log's --reward).
  static llvm::Expected<RewardPolicy> parse(llvm::StringRef text);
};

struct DatasetRecord {
  std::string Key;     // "default" for the inliner, the function name for regalloc
  std::string Payload; // a serialized SequenceExample
  size_t Steps = 0;
};

/// Reads a whole log (every stream; contexts with the same name merged, in
/// order of first appearance) and returns one record per context with at
/// least one observation. Lists are written in header order, then the score
/// (unless it is called "reward"), then "reward".
llvm::Expected<std::vector<DatasetRecord>> logToSequenceExamples(TrainingLogReader &reader, const RewardPolicy &reward);

} // namespace mlgo
