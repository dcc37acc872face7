// A bounds-checked FlatBuffers reader: every offset read from the file is
// checked before it is followed, so a malformed model gives an error naming
// the table and field, never a read outside the buffer; and every copy out of
// the file is charged to the load's budget before it is made. Errors are
// thrown as FlatBufferError and turned into llvm::Error by the model loader.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::model {

struct FlatBufferError {
  std::string Message;
};

/// What loading one model may allocate, all told: the tensor arena, every
/// name, shape and vector copied out of the file (FlatBuffers lets many
/// tables share one string or vector, so a small file can name the same
/// megabyte a thousand times), and every operator's prepared state. Charged
/// before allocating, in overflow-safe arithmetic: a file's contents decide
/// whether it loads, never how much memory the loader takes.
class LoadBudget {
public:
  explicit LoadBudget(uint64_t limit) : Limit(limit) {}
  /// Charges `count` x `each` bytes for `what`; throws FlatBufferError when
  /// the total would pass the limit.
  void charge(uint64_t count, uint64_t each, const std::string &what) {
    uint64_t bytes = 0, total = 0;
    if (__builtin_mul_overflow(count, each, &bytes) || __builtin_add_overflow(Used, bytes, &total) || total > Limit)
      throw FlatBufferError{"its tensors and operators need more than " + std::to_string(Limit >> 20) +
                            " MiB together (the limit for a policy), reached by " + what};
    Used = total;
  }
  uint64_t used() const { return Used; }

private:
  uint64_t Limit, Used = 0;
};

class FlatBuffer;

/// A table: its position and its vtable, both checked.
class FBTable {
public:
  FBTable() = default;
  FBTable(const FlatBuffer *buffer, uint64_t position, const char *what);
  bool valid() const { return Buffer != nullptr; }
  /// The absolute position of field `i`, or nullopt when it is absent.
  std::optional<uint64_t> field(unsigned i) const;
  template <typename T> T scalar(unsigned i, T fallback) const;
  std::optional<FBTable> table(unsigned i, const char *what) const;
  std::optional<std::string> string(unsigned i, const char *what) const;
  /// A vector field: its element count and the position of element 0.
  struct Vector {
    uint64_t Size = 0, Start = 0;
  };
  std::optional<Vector> vector(unsigned i, size_t elementSize, const char *what) const;
  template <typename T> std::vector<T> scalars(unsigned i, const char *what) const;
  std::vector<FBTable> tables(unsigned i, const char *what) const;
  const char *what() const { return What; }

private:
  const FlatBuffer *Buffer = nullptr;
  uint64_t Position = 0, VTable = 0;
  uint16_t VTableSize = 0;
  const char *What = "";
};

class FlatBuffer {
public:
  FlatBuffer(llvm::StringRef bytes, LoadBudget &budget) : Bytes(bytes), Budget(budget) {}
  LoadBudget &budget() const { return Budget; }
  uint64_t size() const { return Bytes.size(); }
  void check(uint64_t position, uint64_t size, const std::string &what) const {
    if (position > Bytes.size() || size > Bytes.size() - position)
      throw FlatBufferError{what + " at byte " + std::to_string(position) + " (" + std::to_string(size) +
                            " bytes) lies outside the file (" + std::to_string(Bytes.size()) + " bytes)"};
  }
  template <typename T> T read(uint64_t position, const std::string &what) const {
    check(position, sizeof(T), what);
    T value;
    std::memcpy(&value, Bytes.data() + position, sizeof(T));
    return value; // FlatBuffers are little-endian, as is every host we build for
  }
  /// Follows the uoffset stored at `position`.
  uint64_t follow(uint64_t position, const std::string &what) const {
    return position + read<uint32_t>(position, what);
  }
  const char *at(uint64_t position) const { return Bytes.data() + position; }
  FBTable root(const char *what) const { return FBTable(this, follow(0, "the root offset"), what); }

private:
  llvm::StringRef Bytes;
  LoadBudget &Budget;
};

inline FBTable::FBTable(const FlatBuffer *buffer, uint64_t position, const char *what)
    : Buffer(buffer), Position(position), What(what) {
  int32_t back = buffer->read<int32_t>(position, std::string(what) + " table");
  VTable = static_cast<uint64_t>(static_cast<int64_t>(position) - back);
  if (static_cast<int64_t>(position) - back < 0)
    throw FlatBufferError{std::string(what) + " table at byte " + std::to_string(position) +
                          " has a vtable before the start of the file"};
  VTableSize = buffer->read<uint16_t>(VTable, std::string(what) + " vtable");
  if (VTableSize < 4 || VTableSize % 2)
    throw FlatBufferError{std::string(what) + " vtable at byte " + std::to_string(VTable) + " has a bad size " +
                          std::to_string(VTableSize)};
  buffer->check(VTable, VTableSize, std::string(what) + " vtable");
}

inline std::optional<uint64_t> FBTable::field(unsigned i) const {
  unsigned slot = 4 + 2 * i;
  if (slot + 2 > VTableSize)
    return std::nullopt;
  uint16_t offset = Buffer->read<uint16_t>(VTable + slot, std::string(What) + " vtable");
  if (offset == 0)
    return std::nullopt;
  return Position + offset;
}

template <typename T> T FBTable::scalar(unsigned i, T fallback) const {
  auto at = field(i);
  return at ? Buffer->read<T>(*at, std::string(What) + " field " + std::to_string(i)) : fallback;
}

inline std::optional<FBTable> FBTable::table(unsigned i, const char *what) const {
  auto at = field(i);
  if (!at)
    return std::nullopt;
  return FBTable(Buffer, Buffer->follow(*at, std::string(What) + "." + what), what);
}

inline std::optional<FBTable::Vector> FBTable::vector(unsigned i, size_t elementSize, const char *what) const {
  auto at = field(i);
  if (!at)
    return std::nullopt;
  std::string name = std::string(What) + "." + what;
  uint64_t start = Buffer->follow(*at, name);
  uint32_t size = Buffer->read<uint32_t>(start, name + " length");
  Buffer->check(start + 4, static_cast<uint64_t>(size) * elementSize, name + " elements");
  return Vector{size, start + 4};
}

inline std::optional<std::string> FBTable::string(unsigned i, const char *what) const {
  auto v = vector(i, 1, what);
  if (!v)
    return std::nullopt;
  Buffer->budget().charge(1, sizeof(std::string) + v->Size, std::string(What) + "." + what);
  return std::string(Buffer->at(v->Start), v->Size);
}

template <typename T> std::vector<T> FBTable::scalars(unsigned i, const char *what) const {
  std::vector<T> values;
  if (auto v = vector(i, sizeof(T), what)) {
    Buffer->budget().charge(v->Size, sizeof(T), std::string(What) + "." + what);
    values.resize(v->Size);
    if (v->Size)
      std::memcpy(values.data(), Buffer->at(v->Start), v->Size * sizeof(T));
  }
  return values;
}

inline std::vector<FBTable> FBTable::tables(unsigned i, const char *what) const {
  std::vector<FBTable> values;
  if (auto v = vector(i, 4, what)) {
    Buffer->budget().charge(v->Size, sizeof(FBTable), std::string(What) + "." + what);
    values.reserve(v->Size);
    for (uint64_t k = 0; k < v->Size; ++k)
      values.emplace_back(Buffer, Buffer->follow(v->Start + 4 * k, std::string(What) + "." + what), what);
  }
  return values;
}

} // namespace mlgo::model
