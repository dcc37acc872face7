// The inliner environment's engine (mlgo_corpus.InlinerEnv wraps it): an
// InlinerEpisode whose queries come out as numpy arrays. Waits release the
// GIL, so other Python threads run while opt works.
#include "Bindings.h"

#include "mlgo/evaluate/InlinerEpisode.h"
#include "mlgo/evaluate/NativeSize.h"

#include <pybind11/stl.h>

#include <cstring>

namespace py = pybind11;

namespace mlgo::python {
namespace {

EpisodeSettings settingsOf(const std::string &opt, const std::string &llc, const std::string &passes, double timeout,
                           const std::string &workDir) {
  EpisodeSettings settings;
  settings.Compiler.Kind = CompilerKind::Opt;
  settings.Compiler.Opt = opt;
  settings.Compiler.Llc = llc;
  settings.Compiler.Passes = passes;
  settings.TimeoutSeconds = timeout;
  settings.WorkDir = workDir;
  return settings;
}

class Episode {
public:
  Episode(const std::string &bitcode, const std::string &opt, const std::string &llc, const std::string &passes,
          double timeout, const std::string &workDir) {
    Impl = unwrap(InlinerEpisode::start(bitcode, settingsOf(opt, llc, passes, timeout, workDir)));
  }

  /// The next query as {feature: array} plus its index, or None at the end.
  py::object next() {
    std::optional<EpisodeQuery> query;
    {
      py::gil_scoped_release unlocked;
      query = Impl->next();
    }
    if (!query)
      return py::none();
    py::dict observation;
    for (size_t i = 0; i < query->Specs.size(); ++i) {
      const TensorSpec &spec = query->Specs[i];
      std::vector<py::ssize_t> shape(spec.Shape.begin(), spec.Shape.end());
      py::array value(dtypeOf(spec.Type), shape);
      std::memcpy(value.mutable_data(), query->Tensors[i].data(), query->Tensors[i].size());
      observation[text(spec.Name)] = value;
    }
    return py::make_tuple(observation, query->Index);
  }

  void answer(int64_t decision) {
    if (llvm::Error e = Impl->answer(decision))
      raise(std::move(e));
  }

  py::dict result() const {
    const EpisodeResult &r = Impl->result();
    py::dict out;
    out["status"] = r.Status;
    out["reason"] = r.Reason;
    out["detail"] = text(r.Detail);
    out["stderr_tail"] = text(r.StderrTail);
    out["decisions"] = r.Decisions;
    out["native_size"] = r.NativeSize ? py::object(py::int_(*r.NativeSize)) : py::none();
    return out;
  }

  void close() {
    py::gil_scoped_release unlocked;
    Impl->close();
  }

private:
  std::unique_ptr<InlinerEpisode> Impl;
};

uint64_t defaultSize(const std::string &bitcode, const std::string &opt, const std::string &llc,
                     const std::string &passes, double timeout, const std::string &workDir) {
  llvm::Expected<uint64_t> size = llvm::createStringError("not compiled");
  {
    py::gil_scoped_release unlocked;
    size = defaultNativeSize(bitcode, settingsOf(opt, llc, passes, timeout, workDir));
  }
  return unwrap(std::move(size));
}

} // namespace

void registerEnvironment(py::module_ &module) {
  py::class_<Episode>(module, "InlinerEpisode")
      .def(py::init<const std::string &, const std::string &, const std::string &, const std::string &, double,
                    const std::string &>(),
           py::arg("bitcode"), py::arg("opt"), py::arg("llc"), py::arg("passes"), py::arg("timeout"),
           py::arg("work_dir"))
      .def("next", &Episode::next)
      .def("answer", &Episode::answer, py::arg("decision"))
      .def("result", &Episode::result)
      .def("close", &Episode::close);
  module.def("default_native_size", &defaultSize, py::arg("bitcode"), py::arg("opt"), py::arg("llc"), py::arg("passes"),
             py::arg("timeout"), py::arg("work_dir"));
  module.def("size_reward", &sizeReward, py::arg("size"), py::arg("baseline"),
             "The reward harvest-logs records for a native size against the default's.");
}

} // namespace mlgo::python
