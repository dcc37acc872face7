// The pieces of mlgo_corpus._native, the Python package's extension module:
// thin wrappers over the C++ library that turn its results into numpy arrays
// and Python objects, and its errors into Python exceptions.
#pragma once

#include <pybind11/pybind11.h>

#include "mlgo/log/TensorSpec.h"

#include "llvm/Support/Error.h"

#include <pybind11/numpy.h>

namespace mlgo::python {

/// Raises the package's error type (a ValueError) with the error's message.
[[noreturn]] void raise(llvm::Error error);

template <typename T> T unwrap(llvm::Expected<T> value) {
  if (!value)
    raise(value.takeError());
  return std::move(*value);
}

/// The numpy dtype of a tensor element type.
pybind11::dtype dtypeOf(ElementType type);
/// A Python str of someone else's bytes: undecodable ones survive as surrogates.
pybind11::str text(const std::string &s);
/// {"name", "type", "port", "shape"}, as logs write a spec.
pybind11::dict specDict(const TensorSpec &spec);

void registerErrors(pybind11::module_ &module);
void registerLogs(pybind11::module_ &module);
void registerDirectories(pybind11::module_ &module);
void registerChannel(pybind11::module_ &module);
void registerEnvironment(pybind11::module_ &module);

} // namespace mlgo::python
