// A TFLite model (`model.tflite`) read by our own bounds-checked FlatBuffers
// code and evaluated natively: the builtin operators MLGO policies use, in
// float32, int32, int64 and bool, static shapes, batch 1. Everything that
// could be mis-evaluated (an unknown operator or option, a custom operator,
// a quantized or dynamic tensor) is refused at load.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlgo::model {

enum class DType : uint8_t { Float32, Int32, Int64, Bool };
const char *dtypeName(DType type); // "float32", "int32", "int64", "bool"
size_t dtypeSize(DType type);

struct TensorInfo {
  std::string Name;
  DType Type = DType::Float32;
  std::vector<int64_t> Shape; // [] is a scalar
  size_t Elements = 1;
  bool Constant = false;
  size_t byteSize() const { return Elements * dtypeSize(Type); }
  std::string describe() const; // "float32[1,70]"
};

/// A graph input or output: its signature name (or the tensor's name when
/// the model has no `action` signature) and its tensor.
struct GraphPort {
  std::string Name;
  size_t Tensor;
};

class TFLiteModel {
public:
  /// Reads and checks `path`; every error names the file.
  static llvm::Expected<std::unique_ptr<TFLiteModel>> load(llvm::StringRef path);
  /// Checks `bytes`, whose name is `path` in errors.
  static llvm::Expected<std::unique_ptr<TFLiteModel>> parse(llvm::StringRef bytes, llvm::StringRef path);
  ~TFLiteModel();

  const std::string &path() const { return Path; }
  const std::vector<TensorInfo> &tensors() const { return Tensors; }
  const std::vector<GraphPort> &inputs() const { return Inputs; }
  const std::vector<GraphPort> &outputs() const { return Outputs; }
  /// "action" when that signature was chosen, else "" (subgraph 0).
  const std::string &signature() const { return Signature; }
  size_t subgraph() const { return Subgraph; }
  /// Every signature key in the file.
  const std::vector<std::string> &signatures() const { return SignatureKeys; }
  /// The operators in execution order, e.g. "FULLY_CONNECTED(RELU)".
  std::vector<std::string> operatorNames() const;

  /// A tensor's bytes. Inputs start as zeros and keep what is written to
  /// them; outputs are valid after invoke().
  llvm::MutableArrayRef<char> data(size_t tensor);
  llvm::ArrayRef<char> data(size_t tensor) const;
  /// Runs the graph. Fails only on a value the operators cannot take (a
  /// gather index out of range).
  llvm::Error invoke();

  struct Op; // one prepared operator (internal)

private:
  TFLiteModel() = default;
  std::string Path, Signature;
  size_t Subgraph = 0;
  std::vector<std::string> SignatureKeys;
  std::vector<TensorInfo> Tensors;
  std::vector<GraphPort> Inputs, Outputs;
  std::vector<uint64_t> Arena; // every tensor's bytes, 8-aligned
  std::vector<size_t> Offsets; // per tensor, in bytes into Arena
  std::vector<Op> Ops;
  friend class ModelBuilder;
};

} // namespace mlgo::model
