#include "Bindings.h"

PYBIND11_MODULE(_native, module) {
  module.doc() = "mlgo-corpus' C++ library: training logs, datasets, harvests and corpora";
  mlgo::python::registerErrors(module);
  mlgo::python::registerLogs(module);
  mlgo::python::registerDirectories(module);
  mlgo::python::registerChannel(module);
  mlgo::python::registerEnvironment(module);
}
