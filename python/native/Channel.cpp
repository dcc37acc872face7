// The reading side of an exec: policy (mlgo_corpus.policy.serve): the
// compiler's channel bytes, as harvest-logs forwards them on the policy's
// standard input, read by the same TrainingLogReader the harvester uses.
#include "Bindings.h"

#include "mlgo/log/TrainingLog.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <unistd.h>

namespace py = pybind11;

namespace mlgo::python {
namespace {

/// Yields ("header", {"features": [...], "advice": spec or None}),
/// ("context", name) and ("observation", {feature: array}); stops at the end
/// of input. The reader returns as soon as an observation's bytes are in:
/// it never waits for more input the compiler only sends after our reply.
class ChannelReader {
public:
  ChannelReader(int fd, std::string name) : Reader(fd, std::move(name), /*owned=*/false, 1 << 16) {}

  py::tuple next() {
    llvm::Expected<TrainingLogReader::Event> event = llvm::createStringError("not read");
    {
      py::gil_scoped_release unlocked;
      event = Reader.next();
    }
    TrainingLogReader::Event kind = unwrap(std::move(event));
    switch (kind) {
    case TrainingLogReader::Event::End:
      throw py::stop_iteration();
    case TrainingLogReader::Event::Header: {
      py::dict header;
      py::list features;
      for (const TensorSpec &spec : Reader.header().Features)
        features.append(specDict(spec));
      header["features"] = features;
      header["advice"] = Reader.header().Advice ? py::object(specDict(*Reader.header().Advice)) : py::none();
      return py::make_tuple("header", header);
    }
    case TrainingLogReader::Event::Context:
      return py::make_tuple("context", text(Reader.context()));
    case TrainingLogReader::Event::Observation: {
      py::dict observation;
      const LogHeader &header = Reader.header();
      for (size_t i = 0; i < header.Features.size(); ++i) {
        const TensorSpec &spec = header.Features[i];
        std::vector<py::ssize_t> shape(spec.Shape.begin(), spec.Shape.end());
        py::array value(dtypeOf(spec.Type), shape);
        llvm::StringRef bytes = Reader.feature(i);
        std::memcpy(value.mutable_data(), bytes.data(), bytes.size());
        observation[text(spec.Name)] = value;
      }
      return py::make_tuple("observation", observation);
    }
    case TrainingLogReader::Event::Outcome:
      return py::make_tuple("outcome", py::bytes(Reader.outcome().data(), Reader.outcome().size()));
    }
    throw py::stop_iteration();
  }

private:
  TrainingLogReader Reader;
};

} // namespace

void registerChannel(py::module_ &module) {
  py::class_<ChannelReader>(module, "ChannelReader")
      .def(py::init<int, std::string>(), py::arg("fd"), py::arg("name") = "<stdin>")
      .def("__iter__", [](ChannelReader &self) -> ChannelReader & { return self; })
      .def("__next__", &ChannelReader::next);
}

} // namespace mlgo::python
