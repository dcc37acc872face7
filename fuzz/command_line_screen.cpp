// A corpus' command line (NUL-separated, as a .cmd) through the screen
// harvest-logs and validate-corpus apply (dropHarvestFlags, then
// screenedCompileLine: a driver line planned by clang-22's driver).
// Contract: the line is refused with UnsafeCommandLineError, or the line to
// run is a cc1 line with no response file, no -mllvm option off the reviewed
// list, that the screen accepts again unchanged; dropping is idempotent.
#include "FuzzSupport.h"

#include "mlgo/corpus/CommandLineSection.h"
#include "mlgo/corpus/InertLlvmOptions.h"
#include "mlgo/corpus/ModuleCommandLine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0; // a command line, not a file
  llvm::StringRef section(reinterpret_cast<const char *>(data), size);
  std::vector<std::string> fields;
  for (llvm::StringRef field : mlgo::splitCommandLineSection(section))
    fields.push_back(field.str());
  std::vector<std::string> dropped = mlgo::dropHarvestFlags(fields);
  FUZZ_CHECK(mlgo::dropHarvestFlags(dropped) == dropped, "dropping the harvest's flags twice drops more");

  const char *clang = "/usr/lib/llvm-22/bin/clang";
  auto line = mlgo::screenedCompileLine(dropped, "m.cmd", clang, "/corpus/m.bc");
  if (!line) {
    bool screened = false;
    llvm::handleAllErrors(line.takeError(), [&](const mlgo::UnsafeCommandLineError &) { screened = true; });
    FUZZ_CHECK(screened, "a refusal that is not an UnsafeCommandLineError");
    return 0;
  }
  FUZZ_CHECK(!line->empty() && line->front() == "-cc1", "the line to run is not a cc1 line");
  for (size_t i = 0; i < line->size(); ++i) {
    llvm::StringRef arg = (*line)[i];
    FUZZ_CHECK(!arg.starts_with("@"), "a response file passed: " + arg.str());
    if (arg == "-mllvm" && i + 1 < line->size()) {
      llvm::StringRef name = llvm::StringRef((*line)[i + 1]).ltrim('-').split('=').first;
      FUZZ_CHECK(mlgo::isInertLlvmOption(name), "an -mllvm option off the list passed: " + (*line)[i + 1]);
    }
  }
  FUZZ_CHECK(!mlgo::unsafeCommandLineFlag(*line), "the screen refuses the line it let through");
  auto again = mlgo::screenedCompileLine(*line, "m.cmd", clang, "/corpus/m.bc");
  FUZZ_CHECK(again && *again == *line, "a cc1 line to run changes when screened again");
  return 0;
}
