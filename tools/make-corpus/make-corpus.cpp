// make-corpus: turn a directory tree of bitcode files into an MLGO corpus.
// Drop-in for LLVM's mlgo-utils make_corpus.
#include "mlgo/extract/Extractor.h"
#include "mlgo/extract/InputLoaders.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/Log.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlgo;

int main(int argc, char **argv) {
  CLI::App app{"Make an MLGO corpus from a directory tree of bitcode files: every *.bc below --input_dir is "
               "checked with BitReader and copied (permission bits too) to <output_dir>/<path>.bc, and "
               "corpus_description.json lists it as <path> (without .bc), with --default_args as the "
               "global_command_override. A drop-in replacement for LLVM's mlgo-utils make_corpus.",
               "make-corpus"};
  app.get_formatter()->column_width(34);
  std::string inputDir, outputDir, verbosity = "INFO";
  int numWorkers = 0;
  double progressInterval = 5;
  bool quiet = false, strict = false, resume = false, noVerify = false;

  app.add_option("--input_dir", inputDir, "The directory searched (recursively) for *.bc files.")->required();
  app.add_option("--output_dir,--output-dir", outputDir, "The corpus root to write. Created if missing.")->required();
  CLI::Option *defaultArgs =
      app.add_option("--default_args", "The command line every module is compiled with, split on whitespace into "
                                       "global_command_override (e.g. \"-O2 -c\"). Default: empty, i.e. [].")
          ->expected(0, 1);
  app.add_option("--num_workers", numWorkers, "Parallel copies (default: one per hardware thread).")
      ->check(CLI::PositiveNumber);
  app.add_option("--verbosity", verbosity, "Log level: DEBUG, INFO, WARNING or ERROR.")
      ->check(CLI::IsMember({"DEBUG", "INFO", "WARNING", "ERROR"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_flag("-q,--quiet", quiet, "Print only errors: no progress, no summary.");
  app.add_flag("--strict", strict, "Exit 3 when any file was not valid bitcode or could not be copied.");
  app.add_flag("--resume", resume, "Skip files an earlier, interrupted run into the same --output_dir copied.");
  app.add_option("--progress_interval", progressInterval,
                 "Seconds between progress reports on stderr; 0 turns them off.")
      ->capture_default_str();
  app.add_flag("--no_verify_bitcode", noVerify,
               "Copy files that are not valid bitcode too (the reference's behaviour), listing them as warnings.");

  bool noFsync = false;
  app.add_flag("--no_fsync", noFsync,
               "Do not fdatasync outputs before the journal names them: faster, but after a power loss (not a crash of "
               "the process) a journaled file may be empty. Default: durable.");
  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;
  log::setLevel(quiet ? log::Level::Error : *log::parseLevel(verbosity));
  installInterruptHandlers();
  setDurableWrites(!noFsync);

  log::warning("make-corpus cannot tell which compilation stage a .bc file comes from; make sure the files are "
               "the IR the compiler sees before optimization (e.g. from -Xclang -fembed-bitcode=all)");

  ExtractOptions options;
  options.OutputDir = outputDir;
  options.Source = SourceKind::BitcodeFiles;
  options.StateName = "make_corpus";
  options.NumWorkers = static_cast<unsigned>(numWorkers);
  options.Resume = resume;
  options.VerifyBitcode = !noVerify;
  options.ProgressInterval = quiet ? 0 : progressInterval;
  std::vector<std::string> override;
  // Python's str.split(): runs of whitespace, no quoting.
  std::string argsText = optionalValue(defaultArgs).value_or("");
  llvm::SmallVector<llvm::StringRef, 16> words;
  llvm::SplitString(argsText, words, " \t\n\v\f\r");
  for (llvm::StringRef word : words)
    override.push_back(word.str());
  options.GlobalCommandOverride = override;
  options.ReportContext["tool"] = "make-corpus";
  options.ReportContext["input"] = inputDir;
  options.ReportContext["input_type"] = "bitcode_directory";
  options.ReportContext["output_dir"] = outputDir;

  auto loaded = loadBitcodeDirectory(inputDir);
  if (!loaded) {
    log::error(llvm::toString(loaded.takeError()));
    return 1;
  }
  auto result = extractCorpus(*loaded, options);
  if (!result) {
    log::error(llvm::toString(result.takeError()));
    return 1;
  }
  const ExtractSummary &summary = result->Summary;
  if (summary.Interrupted) {
    log::warning("interrupted after " + std::to_string(summary.Ok) +
                 " files; corpus_description.json was not "
                 "written. Run the same command again with --resume to finish the rest.");
    return InterruptedExitCode;
  }
  log::info("Copied " + std::to_string(summary.Ok) + " bitcode files out of " + std::to_string(summary.Candidates));
  std::string problems = describeProblems(result->Outcomes);
  if (!result->KeptPrevious.empty()) {
    log::error(std::to_string(result->KeptPrevious.size()) +
               " modules of the existing corpus could not be rewritten and keep their previous files (first: " +
               result->KeptPrevious.front() + "). Details: " + result->ReportPath);
    return 1;
  }
  if (!problems.empty())
    log::warning("Not copied: " + problems + ". Details: " + result->ReportPath);
  if (strict && summary.Failed)
    return 3;
  return 0;
}
