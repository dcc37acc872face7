// Writing the default-trace dataset (TFRecord of tf.train.SequenceExample)
// from training logs: streamed, one log at a time, to a temporary file that
// is renamed into place when complete. Used by harvest-logs --tfrecord and
// training-log to-tfrecord.
#pragma once

#include "mlgo/log/LogDataset.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

struct DatasetInput {
  std::string LogPath;
  RewardPolicy Reward;
  /// When set, LogPath is relative to this directory (a harvest) and is
  /// opened below it without following a symbolic link (BeneathPath.h).
  std::string Below = {};
};

struct DatasetTotals {
  size_t Records = 0, Steps = 0;
};

/// Converts each log in order and appends its records to `path`; with a
/// `keysPath`, also writes each record's key and '\n' there (a single '\n'
/// when there are none). Memory holds one log's records, never the dataset.
/// On an error while converting, nothing is written under either name.
llvm::Expected<DatasetTotals> writeTFRecordDataset(const std::vector<DatasetInput> &inputs, llvm::StringRef path,
                                                   llvm::StringRef keysPath = "");

} // namespace mlgo
