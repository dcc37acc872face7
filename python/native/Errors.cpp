#include "Bindings.h"

namespace py = pybind11;

namespace mlgo::python {
namespace {

// Set once at import; lives as long as the module.
PyObject *ErrorType = nullptr;

} // namespace

void raise(llvm::Error error) {
  std::string message = llvm::toString(std::move(error));
  // Messages quote someone else's bytes (a bad line of a log); strict UTF-8
  // decoding would fail on them and leave the exception without a message.
  PyObject *text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace");
  PyErr_SetObject(ErrorType, text);
  Py_XDECREF(text);
  throw py::error_already_set();
}

void registerErrors(py::module_ &module) {
  static py::exception<std::runtime_error> type(module, "MlgoError", PyExc_ValueError);
  type.doc() = "Bad input (a log, dataset, harvest or corpus) or a failed read; the message names the file and "
               "the reason.";
  ErrorType = type.ptr();
}

} // namespace mlgo::python
