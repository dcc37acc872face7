// The builtin operators the evaluator implements: preparation at load (every
// type, shape and option checked; broadcast and copy index maps computed)
// and execution on the model's tensor arena.
#pragma once

#include "FlatBuffer.h"
#include "mlgo/model/TFLiteModel.h"

#include <functional>
#include <optional>
#include <random>

namespace mlgo::model {

/// TFLite's BuiltinOperator codes of the operators we know by name.
const char *builtinName(int code); // nullptr for codes we do not implement

struct TFLiteModel::Op {
  int Code = 0;
  std::string Label;          // e.g. FULLY_CONNECTED(RELU)
  std::vector<int> In, Out;   // tensor indexes; -1 is an omitted optional input
  std::vector<char *> InData; // resolved after the arena is laid out
  char *OutData = nullptr;
  DType InType = DType::Float32, OutType = DType::Float32;
  size_t N = 0;                          // output elements
  int Activation = 0;                    // fused activation (float outputs)
  std::vector<uint32_t> Map[3];          // per input: output element -> input element (empty: identity)
  size_t Rows = 0, Cols = 0, Units = 0;  // FULLY_CONNECTED: [Rows, Cols] x [Units, Cols]^T
  size_t Outer = 0, Axis = 0, Inner = 0; // ARG_MAX / MEAN / GATHER / CONCATENATION layouts
  std::vector<size_t> Pieces;            // CONCATENATION: each input's axis*inner
  std::vector<float> Boundaries;         // BUCKETIZE
  bool Int64Index = false;               // GATHER indices / ARG_MAX output
  size_t Samples = 0;                    // MULTINOMIAL
  std::mt19937_64 Random;                // MULTINOMIAL
};

/// Checks operator `op` (its Code, In and Out set) against the tensors and
/// its options table, and fills in what execution needs. `constant(t)` is a
/// constant tensor's bytes (empty for others). Throws FlatBufferError.
void prepareOperator(TFLiteModel::Op &op, uint8_t optionsType, const std::optional<FBTable> &options,
                     const std::vector<TensorInfo> &tensors, const std::function<llvm::StringRef(int)> &constant);

/// Runs one prepared operator.
llvm::Error runOperator(TFLiteModel::Op &op);

} // namespace mlgo::model
