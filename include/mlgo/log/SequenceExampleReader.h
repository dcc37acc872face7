// Reads a serialized tf.train.SequenceExample (protobuf wire format) back
// into its feature lists, without protobuf or TensorFlow: what the Python
// package's read_tfrecord and the tests use to check the datasets we write.
// The input is someone else's data: every length is checked against the
// bytes that remain, so nothing is allocated beyond the input's size.
#pragma once

#include "mlgo/log/SequenceExample.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlgo {

struct ParsedFeatureList {
  std::string Key;
  SequenceExampleBuilder::Kind Kind = SequenceExampleBuilder::Kind::Int64;
  /// The values of every step, concatenated; StepSizes[i] counts step i's.
  std::vector<int64_t> Int64Values;
  std::vector<float> FloatValues;
  std::vector<std::string> BytesValues;
  std::vector<size_t> StepSizes;

  size_t steps() const { return StepSizes.size(); }
};

/// The feature lists of `payload` in the order they appear. The context
/// (field 1) and unknown fields are skipped; a list that mixes kinds, a repeated key or malformed wire data is an error
/// that names the list and the byte offset.
llvm::Expected<std::vector<ParsedFeatureList>> parseSequenceExample(llvm::StringRef payload);

} // namespace mlgo
