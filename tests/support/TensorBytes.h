// Building training-log tensors in tests: specs and raw tensor bytes.
#pragma once

#include "mlgo/log/TensorSpec.h"

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace mlgo::test {

inline TensorSpec spec(const std::string &name, ElementType type, std::vector<int64_t> shape = {1}) {
  return TensorSpec{name, type, std::move(shape), 0};
}

/// The native-endian bytes of `values`, as a log holds a tensor.
template <typename T> std::string bytesOf(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

} // namespace mlgo::test
