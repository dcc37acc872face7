#include "mlgo/corpus/DriverJob.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Driver/Compilation.h"
#include "clang/Driver/Driver.h"
#include "clang/Driver/Job.h"
#include "clang/Driver/Tool.h"
#include "clang/Frontend/TextDiagnosticBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/TargetParser/Host.h"

#include <memory>

namespace mlgo {
namespace {

std::string firstError(const clang::TextDiagnosticBuffer &diagnostics) {
  for (auto it = diagnostics.err_begin(); it != diagnostics.err_end(); ++it)
    return it->second;
  return "";
}

} // namespace

llvm::Expected<std::vector<std::string>> cc1LineOfDriverLine(llvm::ArrayRef<std::string> args,
                                                             llvm::StringRef clangPath, llvm::StringRef input) {
  clang::DiagnosticOptions options;
  auto *buffer = new clang::TextDiagnosticBuffer;
  clang::DiagnosticsEngine diagnostics(clang::DiagnosticIDs::create(), options, buffer, /*ShouldOwnClient=*/true);
  clang::driver::Driver driver(clangPath, llvm::sys::getDefaultTargetTriple(), diagnostics, "mlgo screen");
  driver.setCheckInputsExist(false);
  // The corpus' flags, then what harvest-logs adds: -c (a compile never
  // links), the module as IR, a placeholder output.
  std::string output = (input + ".o").str();
  std::string clang = clangPath.str();
  std::vector<const char *> argv = {clang.c_str()};
  for (const std::string &arg : args)
    argv.push_back(arg.c_str());
  std::string inputText = input.str();
  for (const char *ours : {"-c", "-x", "ir", inputText.c_str(), "-o", output.c_str()})
    argv.push_back(ours);
  std::unique_ptr<clang::driver::Compilation> compilation(driver.BuildCompilation(argv));
  if (!compilation || diagnostics.hasErrorOccurred() || compilation->containsError())
    return llvm::createStringError("clang-22's driver refuses the line: %s", firstError(*buffer).c_str());
  const clang::driver::JobList &jobs = compilation->getJobs();
  if (jobs.size() != 1)
    return llvm::createStringError("the driver line makes %zu jobs; harvest-logs runs only a line that is one "
                                   "compile (cc1) job",
                                   jobs.size());
  const clang::driver::Command &job = *jobs.begin();
  const llvm::opt::ArgStringList &cc1 = job.getArguments();
  bool emitsObject = false;
  for (const char *arg : cc1)
    emitsObject = emitsObject || llvm::StringRef(arg) == "-emit-obj";
  if (!job.getCreator().isLinkJob() && llvm::StringRef(job.getCreator().getName()) == "clang" && !cc1.empty() &&
      llvm::StringRef(cc1[0]) == "-cc1" && emitsObject) {
    // The input and output are harvest-logs' own, added after the advisor's flags.
    std::vector<std::string> line;
    for (size_t i = 0; i < cc1.size(); ++i) {
      llvm::StringRef arg = cc1[i];
      if (arg == "-o" && i + 1 < cc1.size()) {
        ++i;
        continue;
      }
      if (arg == "-x" && i + 2 < cc1.size() && llvm::StringRef(cc1[i + 2]) == inputText) {
        i += 2;
        continue;
      }
      if (arg == inputText)
        continue;
      line.push_back(arg.str());
    }
    return line;
  }
  return llvm::createStringError("the driver line runs %s (%s), not one clang compile that emits an object",
                                 job.getCreator().getName(), job.getExecutable());
}

} // namespace mlgo
