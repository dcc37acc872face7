// Object files and static archives through extractCorpus, as extract-ir
// runs it: LLVM Object parses the container, our section reader finds
// .llvmbc/.llvmcmd (ELF, COFF, Mach-O, archive members), the command line is
// split and filtered, and the module files are written. Bitcode is not
// verified here (that is LLVM's own BitReader, fuzzed upstream).
// Contract: the job succeeds; every outcome is Ok with its files written and
// listed in the manifest, or not Ok with a reason and a detail.
#include "FuzzSupport.h"

#include "mlgo/extract/Extractor.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &scratch = mlgo::fuzz::scratchDir();
  mlgo::fuzz::writeScratch("input.o", data, size);
  std::string out = scratch + "/corpus";
  std::filesystem::remove_all(out);

  mlgo::LoadedInput input;
  input.Candidates.push_back({"input.o", scratch, "fuzz input"});
  mlgo::ExtractOptions options;
  options.OutputDir = out;
  options.VerifyBitcode = false;
  options.NumWorkers = 1;
  options.ProgressInterval = 1e9;
  static const mlgo::CmdFilter filter = [] {
    auto compiled = mlgo::CmdFilter::compile("^-O[0-3]$");
    FUZZ_CHECK(bool(compiled), "the filter does not compile");
    return std::move(*compiled);
  }();
  options.Filter = filter;

  auto result = mlgo::extractCorpus(input, options);
  if (!result)
    FUZZ_CHECK(false, "the job failed: " + llvm::toString(result.takeError()));
  FUZZ_CHECK(!result->Outcomes.empty(), "no outcome for the candidate");
  FUZZ_CHECK(result->Description.has_value(), "no manifest");
  for (const mlgo::ModuleOutcome &o : result->Outcomes) {
    if (o.Status == mlgo::ModuleStatus::Ok) {
      FUZZ_CHECK(llvm::sys::fs::exists(out + "/" + o.Name + ".bc"), "no .bc for " + o.Name);
      FUZZ_CHECK(llvm::sys::fs::exists(out + "/" + o.Name + ".cmd"), "no .cmd for " + o.Name);
      const auto &modules = result->Description->Modules;
      FUZZ_CHECK(std::find(modules.begin(), modules.end(), o.Name) != modules.end(), o.Name + " not in the manifest");
    } else {
      FUZZ_CHECK(!o.Reason.empty() && !o.Detail.empty(), "a failure without reason for " + o.Input);
    }
  }
  return 0;
}
