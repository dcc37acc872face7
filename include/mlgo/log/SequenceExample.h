// tf.train.SequenceExample, encoded directly in protobuf wire format:
// feature_lists only; integers as int64_list, float/double as float_list,
// strings as bytes_list.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlgo {

class SequenceExampleBuilder {
public:
  enum class Kind { Int64, Float, Bytes };

  /// Adds (or finds) the feature list `key`; lists are written in the order
  /// they were first added.
  size_t list(llvm::StringRef key, Kind kind);
  /// Appends one step (one Feature) to list `index`.
  void appendInt64(size_t index, llvm::ArrayRef<int64_t> values);
  void appendFloat(size_t index, llvm::ArrayRef<float> values);
  void appendBytes(size_t index, llvm::ArrayRef<llvm::StringRef> values);
  size_t steps(size_t index) const { return Lists[index].Steps; }
  bool empty() const { return Lists.empty(); }

  /// The serialized SequenceExample.
  std::string serialize() const;

private:
  struct FeatureList {
    std::string Key;
    Kind Type;
    std::string Features; // encoded `Feature` fields (tag 0a), one per step
    size_t Steps = 0;
  };
  std::vector<FeatureList> Lists;
};

/// Protobuf wire helpers, shared with tests.
void appendVarint(std::string &out, uint64_t value);
void appendLengthDelimited(std::string &out, unsigned field, llvm::StringRef bytes);

} // namespace mlgo
