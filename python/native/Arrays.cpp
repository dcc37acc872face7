// What the bindings share: numpy dtypes and Python values for our types.
#include "Bindings.h"

#include <pybind11/stl.h>

namespace py = pybind11;

namespace mlgo::python {

py::dtype dtypeOf(ElementType type) {
  switch (type) {
  case ElementType::Float:
    return py::dtype::of<float>();
  case ElementType::Double:
    return py::dtype::of<double>();
  case ElementType::Int8:
    return py::dtype::of<int8_t>();
  case ElementType::UInt8:
    return py::dtype::of<uint8_t>();
  case ElementType::Int16:
    return py::dtype::of<int16_t>();
  case ElementType::UInt16:
    return py::dtype::of<uint16_t>();
  case ElementType::Int32:
    return py::dtype::of<int32_t>();
  case ElementType::UInt32:
    return py::dtype::of<uint32_t>();
  case ElementType::Int64:
    return py::dtype::of<int64_t>();
  case ElementType::UInt64:
    return py::dtype::of<uint64_t>();
  }
  return py::dtype::of<int64_t>();
}

py::str text(const std::string &s) {
  // Names come from someone else's file: undecodable bytes survive as
  // surrogates instead of failing the whole read.
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape"));
}

py::dict specDict(const TensorSpec &spec) {
  py::dict out;
  out["name"] = text(spec.Name);
  out["type"] = elementTypeName(spec.Type);
  out["port"] = spec.Port;
  out["shape"] = spec.Shape;
  return out;
}

} // namespace mlgo::python
