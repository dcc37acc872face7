// Harvest directories and corpora, read and validated by the same C++
// readers the tools use, handed to Python as JSON text and paths.
#include "Bindings.h"

#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/corpus/ModuleCommandLine.h"
#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/PathUtil.h"

#include <pybind11/stl.h>

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace py = pybind11;

namespace mlgo::python {
namespace {

py::dict readHarvest(const std::string &dir) {
  HarvestDirectory harvest = unwrap(readHarvestDirectory(dir));
  py::dict out;
  out["options"] = harvest.Journal.Options ? py::object(py::str(harvest.Journal.Options->dump())) : py::none();
  py::list records;
  for (const HarvestJournalLine &line : harvest.Journal.Latest) {
    py::dict record;
    record["json"] = line.Record.toJson().dump();
    record["log"] = line.Record.hasLog() ? py::object(py::str(harvestLogPath(dir, line.Record.Module))) : py::none();
    record["sites"] = harvestSitesPath(dir, line.Record.Module);
    record["log_name"] = harvestLogName(line.Record.Module);
    record["sites_name"] = harvestSitesName(line.Record.Module);
    records.append(record);
  }
  out["records"] = records;
  out["torn_tail"] = harvest.Journal.TornTail;
  out["summary"] = harvest.Summary ? py::object(py::str(harvest.Summary->Value.dump())) : py::none();
  return out;
}

py::dict readCorpus(const std::string &dir) {
  CorpusDescription description = unwrap(readCheckedCorpusDescription(dir));
  py::dict out;
  out["fields"] = description.Fields.dump();
  out["modules"] = description.Modules;
  return out;
}

// A small file of a harvest (a sites file) as bytes, opened as a regular
// file below `root` without following a symbolic link in any component;
// None when it is absent.
py::object readFileBeneath(const std::string &root, const std::string &relative) {
  auto fd = openRegularFileBeneath(root, relative);
  if (!fd) {
    llvm::Error e = fd.takeError();
    if (consumeIfMissing(e))
      return py::none();
    raise(std::move(e));
  }
  std::string data;
  char buffer[1 << 16];
  for (ssize_t n; (n = ::read(fd->get(), buffer, sizeof(buffer))) != 0;) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      raise(llvm::createStringError(std::error_code(errno, std::generic_category()), "%s: cannot read: %s",
                                    joinPath(root, relative).c_str(), std::strerror(errno)));
    data.append(buffer, static_cast<size_t>(n));
  }
  return py::bytes(data);
}

std::vector<std::string> commandLine(const std::string &cmdPath) { return unwrap(readModuleCommandLine(cmdPath)); }

} // namespace

void registerDirectories(py::module_ &module) {
  module.def("read_harvest", &readHarvest, py::arg("dir"),
             "A harvest directory's journal (latest record per module), summary and log paths, validated.");
  module.def("read_file_beneath", &readFileBeneath, py::arg("root"), py::arg("relative"),
             "The bytes of the regular file `relative` below `root`, following no symbolic link below it; None when "
             "absent.");
  module.def("read_corpus", &readCorpus, py::arg("dir"), "A corpus' description, its module names checked.");
  module.def("read_command_line", &commandLine, py::arg("cmd_path"), "A module's .cmd file as a list of arguments.");
}

} // namespace mlgo::python
