// The pieces of mlgo_corpus._native, the Python package's extension module:
// thin wrappers over the C++ library that turn its results into numpy arrays
// and Python objects, and its errors into Python exceptions.
#pragma once

#include <pybind11/pybind11.h>

#include "llvm/Support/Error.h"

namespace mlgo::python {

/// Raises the package's error type (a ValueError) with the error's message.
[[noreturn]] void raise(llvm::Error error);

template <typename T> T unwrap(llvm::Expected<T> value) {
  if (!value)
    raise(value.takeError());
  return std::move(*value);
}

void registerErrors(pybind11::module_ &module);
void registerLogs(pybind11::module_ &module);
void registerDirectories(pybind11::module_ &module);

} // namespace mlgo::python
