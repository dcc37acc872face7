// The builtin operators the evaluator implements: preparation at load (every
// type, shape and option checked; how broadcasts and copies walk their
// operands worked out, in a few words per operator) and execution on the
// model's tensor arena.
#pragma once

#include "FlatBuffer.h"
#include "mlgo/model/TFLiteModel.h"

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <random>

namespace mlgo::model {

/// TFLite's BuiltinOperator codes of the operators we know by name.
const char *builtinName(int code); // nullptr for codes we do not implement

/// How an operator visits elements without an index map: the driving
/// tensor's elements (the output's; MEAN's input's) in order, as nested loops
/// over Dims, with each operand's element stride per loop (0 where it
/// broadcasts). Dims of size 1 are dropped and runs contiguous in every
/// operand merged, so a walk has at most log2(elements) loops, and equal
/// shapes make one loop of stride 1.
struct Walk {
  static constexpr size_t MaxOperands = 3;
  static constexpr size_t MaxLoops = 32; // > log2 of the elements any tensor may have
  std::vector<size_t> Dims;
  std::vector<std::array<size_t, MaxOperands>> Strides; // per loop, per operand
  size_t Elements = 1;
};

struct TFLiteModel::Op {
  int Code = 0;
  std::string Label;          // e.g. FULLY_CONNECTED(RELU)
  std::vector<int> In, Out;   // tensor indexes; -1 is an omitted optional input
  std::vector<char *> InData; // resolved after the arena is laid out
  char *OutData = nullptr;
  DType InType = DType::Float32, OutType = DType::Float32;
  size_t N = 0;                            // output elements
  int Activation = 0;                      // fused activation (float outputs)
  Walk Steps;                              // elementwise, broadcasting and copying operators
  size_t Rows = 0, Cols = 0, Units = 0;    // FULLY_CONNECTED: [Rows, Cols] x [Units, Cols]^T
  size_t Outer = 0, Axis = 0, Inner = 0;   // ARG_MAX / MEAN / GATHER / CONCATENATION layouts
  std::vector<size_t> Pieces;              // CONCATENATION: each input's axis*inner
  std::vector<float> Boundaries;           // BUCKETIZE
  bool Int64Index = false;                 // GATHER indices / ARG_MAX output
  size_t Samples = 0;                      // MULTINOMIAL
  std::unique_ptr<std::mt19937_64> Random; // MULTINOMIAL only (2.5 KB of state)
};

/// The most dimensions a tensor may have (TFLite's own kernels take 6 at most).
constexpr size_t MaxRank = 16;

/// Checks operator `op` (its Code, In and Out set) against the tensors and
/// its options table, and fills in what execution needs. `constant(t)` is a
/// constant tensor's bytes (empty for others); what it copies out of them is
/// charged to `budget`. Throws FlatBufferError.
void prepareOperator(TFLiteModel::Op &op, uint8_t optionsType, const std::optional<FBTable> &options,
                     const std::vector<TensorInfo> &tensors, const std::function<llvm::StringRef(int)> &constant,
                     LoadBudget &budget);

/// Runs one prepared operator.
llvm::Error runOperator(TFLiteModel::Op &op);

} // namespace mlgo::model
