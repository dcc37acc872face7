// TensorSpec: a named, typed, shaped tensor, as LLVM's MLGO logs declare
// their features (llvm/Analysis/TensorSpec.h).
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace llvm::json {
class OStream;
}

namespace mlgo {

/// No tensor in a log may be larger than this (256 MiB): a bound that keeps
/// a hostile header from asking for absurd allocations. LLVM's largest
/// (regalloc development features) is under 100 KB.
constexpr uint64_t MaxTensorBytes = uint64_t(1) << 28;

enum class ElementType { Float, Double, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64 };

/// "float", "double", "int8_t", ... "uint64_t": the names LLVM writes.
const char *elementTypeName(ElementType type);
std::optional<ElementType> parseElementType(llvm::StringRef name);
size_t elementSize(ElementType type);
bool isFloatingPoint(ElementType type);

struct TensorSpec {
  std::string Name;
  ElementType Type = ElementType::Int64;
  std::vector<int64_t> Shape{1};
  int Port = 0;

  /// Valid for specs that fromJson accepted (or built in code): their byte
  /// size is at most MaxTensorBytes, so neither product overflows.
  size_t elementCount() const;
  size_t byteSize() const { return elementCount() * elementSize(Type); }
  /// The byte size computed with overflow checks; an error when it overflows
  /// or exceeds MaxTensorBytes.
  llvm::Expected<uint64_t> checkedByteSize() const;

  /// Element `i` of a tensor's bytes, as a double (int64 values beyond 2^53
  /// lose precision) or as an int64 (floats are truncated).
  double elementAsDouble(llvm::StringRef bytes, size_t i) const;
  int64_t elementAsInt(llvm::StringRef bytes, size_t i) const;

  /// {"name":...,"type":...,"port":...,"shape":[...]} in LLVM's key order.
  void toJson(llvm::json::OStream &os) const;
  /// LLVM's getTensorSpecFromJSON: all four keys required, any order; also
  /// rejects shapes whose byte size overflows or exceeds MaxTensorBytes.
  static llvm::Expected<TensorSpec> fromJson(const nlohmann::json &json);

  bool operator==(const TensorSpec &other) const = default;
};

} // namespace mlgo
