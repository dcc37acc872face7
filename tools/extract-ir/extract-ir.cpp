// extract-ir: build an MLGO corpus from the bitcode and command lines that
// clang embedded in object files. Drop-in for LLVM's mlgo-utils extract_ir.
#include "mlgo/corpus/LinkOrder.h"
#include "mlgo/extract/Extractor.h"
#include "mlgo/extract/InputLoaders.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"

#include <cstdio>
#include <map>
#include <set>

using namespace mlgo;

namespace {

constexpr int ExitJobFailed = 1;
constexpr int ExitUsage = 2;
constexpr int ExitStrictFailures = 3;

llvm::Expected<LoadedInput> loadInput(const std::string &type, const std::string &input, const std::string &base) {
  if (type == "json")
    return loadCompileCommands(input);
  if (type == "params")
    return loadLinkerParams(input, base);
  if (type == "directory")
    return loadObjectDirectory(input);
  if (type == "binary")
    return loadLinkedBinaries(input);
  return loadBazelAquery(input, base);
}

// An input that is a link (a params file, bazel's CppLink, one linked
// binary) says in which order the modules were linked: link_order.json,
// for harvest-logs --link. Any other input leaves no such file (an old one
// would describe another extraction).
llvm::Error recordLinkOrder(const std::string &inputType, const std::string &input, const ExtractResult &result,
                            const std::string &outputDir) {
  std::set<std::string> binaries;
  for (const ModuleOutcome &o : result.Outcomes)
    if (o.Status == ModuleStatus::Ok || o.KeptPrevious)
      binaries.insert(o.Input);
  // A directory of binaries is several links, with no one order.
  bool oneLink =
      inputType == "params" || inputType == "bazel_aquery" || (inputType == "binary" && binaries.size() == 1);
  if (!oneLink || !result.Description) {
    std::string stale = joinPath(outputDir, LinkOrderFile);
    if (std::error_code ec = llvm::sys::fs::remove(stale))
      return llvm::createStringError(ec, "cannot remove %s: %s", stale.c_str(), ec.message().c_str());
    return llvm::Error::success();
  }
  return writeLinkOrder(outputDir, {inputType, input, result.Description->Modules});
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Extract embedded bitcode (.llvmbc) and cc1 command lines (.llvmcmd) from object files into an "
               "MLGO corpus: <output_dir>/corpus_description.json plus <module>.bc, <module>.cmd and, for ThinLTO, "
               "<module>.thinlto.bc. A drop-in replacement for LLVM's mlgo-utils extract_ir: same flags, same "
               "corpus, but in-process, parallel, resumable, and every failure is reported.",
               "extract-ir"};
  app.get_formatter()->column_width(34);

  std::string input, inputType = "json", outputDir, objBaseDir, cmdSection, bitcodeSection, thinlto, verbosity = "INFO",
                     objcopyPath = "llvm-objcopy";
  int numWorkers = 0;
  double progressInterval = 5;
  bool quiet = false, strict = false, resume = false, noVerify = false;

  app.add_option("--input", input,
                 "The build description to read: a compile_commands.json, a linker params file, a directory of "
                 "objects, or `bazel aquery --output=jsonproto` output, as --input_type says. Not allowed with "
                 "--thinlto_build=local.");
  app.add_option("--input_type", inputType,
                 "How to read --input: json (compile_commands.json; each entry's object is its -o, relative to "
                 "its directory), params (linker params file, one argument per line, @file expanded), directory "
                 "(every *.o and *.a below --input), bazel_aquery (the objects of the last CppLink action), binary "
                 "(--input is a linked executable or shared library, or a directory searched for them; each "
                 "linked object's module is split out).")
      ->check(CLI::IsMember({"json", "params", "directory", "bazel_aquery", "binary"}))
      ->capture_default_str();
  app.add_option("--output_dir,--output-dir", outputDir, "The corpus root to write. Created if missing.")->required();
  app.add_option("--num_workers", numWorkers, "Parallel workers (default: one per hardware thread).")
      ->check(CLI::PositiveNumber);
  app.add_option("--llvm_objcopy_path", objcopyPath,
                 "Accepted for compatibility and ignored: sections are read in-process with LLVM's Object library.");
  app.add_option("--obj_base_dir", objBaseDir,
                 "Base directory of the relative object paths of params and bazel_aquery inputs, and the directory "
                 "searched by --thinlto_build=local (default: the current directory).");
  CLI::Option *filterOption =
      app.add_option("--cmd_filter", "Keep only modules with some embedded command-line argument that contains a "
                                     "match for this ECMAScript regex (e.g. '^-O2$'). Bare or empty: no filter.")
          ->expected(0, 1);
  app.add_option("--thinlto_build", thinlto,
                 "distributed: also copy each object's -fthinlto-index file to <module>.thinlto.bc. local: lld "
                 "--save-temps=import mode; take <obj>.3.import.bc and <obj>.thinlto.bc below --obj_base_dir.")
      ->check(CLI::IsMember({"distributed", "local"}));
  app.add_option("--cmd_section_name", cmdSection,
                 "Section holding the command line. Default: each object format's own name, .llvmcmd (ELF, COFF) "
                 "or __LLVM,__cmdline (Mach-O), so mixed trees need no flag. Given, it is used for every object.");
  app.add_option("--bitcode_section_name", bitcodeSection,
                 "Section holding the bitcode. Default: .llvmbc (ELF, COFF) or __LLVM,__bitcode (Mach-O), per "
                 "object. Given, it is used for every object.");
  app.add_option("--verbosity", verbosity, "Log level: DEBUG, INFO, WARNING or ERROR.")
      ->check(CLI::IsMember({"DEBUG", "INFO", "WARNING", "ERROR"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_flag("-q,--quiet", quiet, "Print only errors: no progress, no summary.");
  app.add_flag("--strict", strict, "Exit 3 when any object failed or any input entry was skipped.");
  app.add_flag("--resume", resume,
               "Skip objects that an earlier run into the same --output_dir finished, if the object is unchanged "
               "and its files are present (after an interrupt or a crash).");
  app.add_option("--progress_interval", progressInterval,
                 "Seconds between progress reports on stderr (a live line on a terminal); 0 turns them off.")
      ->capture_default_str();
  app.add_flag("--no_verify_bitcode", noVerify,
               "Keep sections that are not valid bitcode (the reference's behaviour) instead of failing them; "
               "they are listed as warnings in the report.");

  bool noFsync = false;
  app.add_flag("--no_fsync", noFsync,
               "Do not fdatasync outputs before the journal names them: faster, but after a power loss (not a crash of "
               "the process) a journaled file may be empty. Default: durable.");
  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;

  log::setLevel(quiet ? log::Level::Error : *log::parseLevel(verbosity));
  installInterruptHandlers();
  setDurableWrites(!noFsync);

  ExtractOptions options;
  options.OutputDir = outputDir;
  options.BitcodeSection = bitcodeSection;
  options.CmdSection = cmdSection;
  options.ThinLTO = thinlto == "local"         ? ThinLTOMode::Local
                    : thinlto == "distributed" ? ThinLTOMode::Distributed
                                               : ThinLTOMode::None;
  options.NumWorkers = static_cast<unsigned>(numWorkers);
  options.Resume = resume;
  options.OwnFiles = {LinkOrderFile};
  options.VerifyBitcode = !noVerify;
  options.ProgressInterval = quiet ? 0 : progressInterval;

  if (std::optional<std::string> pattern = optionalValue(filterOption)) {
    auto filter = CmdFilter::compile(*pattern);
    if (!filter) {
      std::fprintf(stderr, "extract-ir: error: %s\n", llvm::toString(filter.takeError()).c_str());
      return ExitUsage;
    }
    if (filter->matchesEmpty())
      log::warning("--cmd_filter '" + *pattern +
                   "' matches the empty string, so it keeps every module with at least one argument");
    options.Filter = std::move(*filter);
  }
  if (app.count("--llvm_objcopy_path"))
    log::debug("--llvm_objcopy_path is ignored: sections are read in-process");

  if (options.ThinLTO == ThinLTOMode::Local && !input.empty()) {
    log::error("--thinlto_build=local cannot be run with --input");
    return ExitJobFailed;
  }
  if (options.ThinLTO != ThinLTOMode::Local && input.empty()) {
    log::error("--input or --thinlto_build=local must be provided");
    return ExitJobFailed;
  }

  options.ReportContext["tool"] = "extract-ir";
  options.ReportContext["input"] = input;
  options.ReportContext["input_type"] = options.ThinLTO == ThinLTOMode::Local ? "local_thinlto" : inputType;
  options.ReportContext["output_dir"] = outputDir;

  auto loaded =
      options.ThinLTO == ThinLTOMode::Local ? loadLocalThinLTO(objBaseDir) : loadInput(inputType, input, objBaseDir);
  if (!loaded) {
    log::error(llvm::toString(loaded.takeError()));
    return ExitJobFailed;
  }
  auto result = extractCorpus(*loaded, options);
  if (!result) {
    log::error(llvm::toString(result.takeError()));
    return ExitJobFailed;
  }

  const ExtractSummary &summary = result->Summary;
  if (!summary.Interrupted)
    if (llvm::Error e =
            recordLinkOrder(options.ThinLTO == ThinLTOMode::Local ? "" : inputType, input, *result, outputDir)) {
      log::error(llvm::toString(std::move(e)));
      return ExitJobFailed;
    }
  if (summary.Interrupted) {
    log::warning("interrupted after " + std::to_string(summary.Ok) +
                 " modules; corpus_description.json was not "
                 "written. Run the same command again with --resume to finish the rest.");
    return InterruptedExitCode;
  }
  if (summary.Resumed)
    log::info("Resumed: " + std::to_string(summary.Resumed) + " modules were already done");
  log::info("Converted " + std::to_string(summary.Ok) + " files out of " + std::to_string(summary.Candidates));
  std::string problems = describeProblems(result->Outcomes);
  if (!result->KeptPrevious.empty()) {
    log::error(std::to_string(result->KeptPrevious.size()) +
               " modules of the existing corpus could not be rewritten and keep their previous files (first: " +
               result->KeptPrevious.front() + "). Details: " + result->ReportPath);
    return ExitJobFailed;
  }
  if (!problems.empty())
    log::warning("Not converted: " + problems + ". Details: " + result->ReportPath);
  if (strict && (summary.Failed || summary.Skipped))
    return ExitStrictFailures;
  return 0;
}
