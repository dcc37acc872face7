// Training logs and TFRecord datasets as numpy arrays.
#include "Bindings.h"

#include "mlgo/log/LogColumns.h"
#include "mlgo/log/Problem.h"
#include "mlgo/log/SequenceExampleReader.h"
#include "mlgo/log/TFRecord.h"

#include "llvm/Support/MemoryBuffer.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdlib>

namespace py = pybind11;

namespace mlgo::python {
namespace {

// An [n, *shape] array over the column's own memory: handed over, not copied.
py::array takeColumn(ColumnBuffer &column, const TensorSpec &spec, size_t n) {
  std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(n)};
  for (int64_t d : spec.Shape)
    shape.push_back(static_cast<py::ssize_t>(d));
  if (n == 0 || spec.byteSize() == 0)
    return py::array(dtypeOf(spec.Type), shape);
  void *memory = column.release();
  py::capsule owner(memory, [](void *p) { std::free(p); });
  return py::array(dtypeOf(spec.Type), shape, memory, owner);
}

template <typename T> py::array takeVector(std::vector<T> &&values) {
  auto *owned = new std::vector<T>(std::move(values));
  py::capsule owner(owned, [](void *p) { delete static_cast<std::vector<T> *>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(owned->size())}, owned->data(), owner);
}

py::dict columnsToDict(LogColumns &columns) {
  const LogHeader &header = columns.Header;
  size_t n = columns.Observations;
  py::dict out;
  py::list specs;
  py::dict features;
  for (size_t i = 0; i < header.Features.size(); ++i) {
    specs.append(specDict(header.Features[i]));
    features[text(header.Features[i].Name)] = takeColumn(columns.Features[i], header.Features[i], n);
  }
  out["specs"] = specs;
  out["features"] = features;
  if (header.Score) {
    out["score"] = specDict(*header.Score);
    out["rewards"] = takeColumn(columns.Rewards, *header.Score, n);
  } else {
    out["score"] = py::none();
    out["rewards"] = py::none();
  }
  py::array_t<bool> hasReward(static_cast<py::ssize_t>(n));
  auto flags = hasReward.mutable_unchecked<1>();
  for (size_t i = 0; i < n; ++i)
    flags(i) = columns.HasReward[i] != 0;
  out["has_reward"] = hasReward;
  py::list contexts;
  for (const std::string &name : columns.Contexts)
    contexts.append(text(name));
  out["contexts"] = contexts;
  out["context_index"] = takeVector(std::move(columns.ContextIndex));
  out["observation_ids"] = takeVector(std::move(columns.ObservationIds));
  std::optional<Problem> problem = detectProblem(header);
  out["problem"] = problem ? py::object(py::str(problemName(*problem))) : py::none();
  out["decision"] = problem ? py::object(py::str(decisionName(*problem))) : py::none();
  return out;
}

py::dict readLog(const std::string &path) {
  llvm::Expected<LogColumns> columns = llvm::createStringError("not read");
  {
    py::gil_scoped_release unlocked;
    columns = readLogColumns(path);
  }
  LogColumns read = unwrap(std::move(columns));
  return columnsToDict(read);
}

// A harvest's log: below the harvest no symbolic link is followed, in any
// component (a planted logs/sub -> /elsewhere would read another file).
py::dict readLogBeneath(const std::string &root, const std::string &relative) {
  llvm::Expected<LogColumns> columns = llvm::createStringError("not read");
  {
    py::gil_scoped_release unlocked;
    columns = readLogColumnsBeneath(root, relative);
  }
  LogColumns read = unwrap(std::move(columns));
  return columnsToDict(read);
}

/// iter_log's batches: a Python iterator over one open log.
class LogBatches {
public:
  LogBatches(const std::string &path, size_t batchSize) : BatchSize(batchSize) {
    if (batchSize == 0)
      throw py::value_error("batch_size must be at least 1");
    Reader = unwrap(LogColumnReader::open(path));
  }
  /// A harvest's log, opened below `root` without following a link.
  LogBatches(const std::string &root, const std::string &relative, size_t batchSize) : BatchSize(batchSize) {
    if (batchSize == 0)
      throw py::value_error("batch_size must be at least 1");
    Reader = unwrap(LogColumnReader::openBeneath(root, relative));
  }

  py::dict next() {
    if (!Reader || Reader->done())
      throw py::stop_iteration();
    llvm::Expected<LogColumns> batch = llvm::createStringError("not read");
    {
      py::gil_scoped_release unlocked;
      batch = Reader->read(BatchSize);
    }
    if (!batch) {
      Reader.reset(); // the log cannot be read past its error
      raise(batch.takeError());
    }
    if (batch->Observations == 0 && Reader->done())
      throw py::stop_iteration();
    return columnsToDict(*batch);
  }

private:
  std::unique_ptr<LogColumnReader> Reader;
  size_t BatchSize;
};

py::list readTFRecord(const std::string &path) {
  llvm::Expected<std::vector<std::vector<ParsedFeatureList>>> parsed = llvm::createStringError("not read");
  {
    py::gil_scoped_release unlocked;
    parsed = [&]() -> llvm::Expected<std::vector<std::vector<ParsedFeatureList>>> {
      auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
      if (!buffer)
        return llvm::createStringError(buffer.getError(), "%s: cannot read: %s", path.c_str(),
                                       buffer.getError().message().c_str());
      auto records = readTFRecords((*buffer)->getBuffer());
      if (!records)
        return llvm::createStringError("%s: %s", path.c_str(), llvm::toString(records.takeError()).c_str());
      std::vector<std::vector<ParsedFeatureList>> out;
      for (size_t i = 0; i < records->size(); ++i) {
        auto lists = parseSequenceExample((*records)[i]);
        if (!lists)
          return llvm::createStringError("%s: record %zu: %s", path.c_str(), i,
                                         llvm::toString(lists.takeError()).c_str());
        out.push_back(std::move(*lists));
      }
      return out;
    }();
  }
  auto records = unwrap(std::move(parsed));
  py::list out;
  for (std::vector<ParsedFeatureList> &lists : records) {
    py::list record;
    for (ParsedFeatureList &list : lists) {
      std::vector<int64_t> steps(list.StepSizes.begin(), list.StepSizes.end());
      if (list.Kind == SequenceExampleBuilder::Kind::Bytes) {
        py::list values; // bytes_list: Python bytes, not an array
        for (const std::string &v : list.BytesValues)
          values.append(py::bytes(v));
        record.append(py::make_tuple(text(list.Key), values, takeVector(std::move(steps))));
        continue;
      }
      py::array values = list.Kind == SequenceExampleBuilder::Kind::Float ? takeVector(std::move(list.FloatValues))
                                                                          : takeVector(std::move(list.Int64Values));
      record.append(py::make_tuple(text(list.Key), values, takeVector(std::move(steps))));
    }
    out.append(record);
  }
  return out;
}

} // namespace

void registerLogs(py::module_ &module) {
  module.def("read_log", &readLog, py::arg("path"),
             "Every observation of a training log, column by column (a dict; mlgo_corpus.read_log wraps it).");
  module.def("read_log_beneath", &readLogBeneath, py::arg("root"), py::arg("relative"),
             "read_log of the log `relative` below the directory `root`, following no symbolic link below it.");
  py::class_<LogBatches>(module, "LogBatches")
      .def(py::init<const std::string &, size_t>(), py::arg("path"), py::arg("batch_size"))
      .def(py::init<const std::string &, const std::string &, size_t>(), py::arg("root"), py::arg("relative"),
           py::arg("batch_size"))
      .def("__iter__", [](LogBatches &self) -> LogBatches & { return self; })
      .def("__next__", &LogBatches::next);
  module.def("read_tfrecord", &readTFRecord, py::arg("path"),
             "The SequenceExamples of a TFRecord file: per record, (key, values, step sizes) per feature list.");
}

} // namespace mlgo::python
