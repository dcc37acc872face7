// Extracts a corpus from loaded candidates: plans (dedup, naming), extracts
// in parallel with oneTBB, writes module files atomically, journals every
// result, and writes the report and corpus_description.json.
#pragma once

#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/extract/CmdFilter.h"
#include "mlgo/extract/ExtractReport.h"
#include "mlgo/extract/ModuleOutcome.h"
#include "mlgo/extract/ObjectCandidate.h"

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

enum class ThinLTOMode { None, Distributed, Local };

/// What a candidate's file holds.
enum class SourceKind {
  /// An object file (or a static archive of them) with embedded sections.
  Objects,
  /// A bitcode file, copied as the module's .bc (make-corpus).
  BitcodeFiles,
};

struct ExtractOptions {
  std::string OutputDir;
  SourceKind Source = SourceKind::Objects;
  /// Names the journal and report in <output_dir>/.mlgo-corpus/
  /// (`<StateName>.journal`, `<StateName>.report.json`).
  std::string StateName = "extract_ir";
  /// Written as the manifest's global_command_override (make-corpus's
  /// --default_args); local ThinLTO writes ["<UNSPECIFIED>"] by itself.
  std::optional<std::vector<std::string>> GlobalCommandOverride;
  /// The sections to read. Empty: each object format's native name
  /// (nativeSectionNames: `.llvmbc`/`.llvmcmd`, Mach-O `__LLVM,__bitcode`/
  /// `__LLVM,__cmdline`), so mixed trees work without flags.
  std::string BitcodeSection;
  std::string CmdSection;
  ThinLTOMode ThinLTO = ThinLTOMode::None;
  std::optional<CmdFilter> Filter;
  /// Check each .bc with BitReader before writing it; when off, invalid
  /// bitcode is kept (as the reference does) and reported as a warning.
  bool VerifyBitcode = true;
  unsigned NumWorkers = 0; // 0: one per hardware thread
  /// Skip candidates the journal records as done whose input is unchanged
  /// and whose files are present.
  bool Resume = false;
  double ProgressInterval = 5;
  /// Copied into the report (input, input_type, ...).
  nlohmann::ordered_json ReportContext = nlohmann::ordered_json::object();
};

struct ExtractResult {
  /// Loader-skipped entries first, then one outcome per candidate, in
  /// candidate order.
  std::vector<ModuleOutcome> Outcomes;
  ExtractSummary Summary;
  /// Empty when interrupted (no manifest is written then).
  std::optional<CorpusDescription> Description;
  std::string ReportPath;
  /// Modules of the existing corpus whose files could not be rewritten: they
  /// stay in the corpus with their previous files, and are failed outcomes.
  std::vector<std::string> KeptPrevious;
};

/// Where tool state lives inside a corpus: hidden, so consumers ignore it.
std::string stateDirectory(llvm::StringRef outputDir);

/// The options that shape the output, keyed by flag name: the journal's
/// header. --resume refuses a journal written with other ones.
nlohmann::ordered_json extractJournalOptions(const ExtractOptions &options);

/// Runs the whole extraction. An Error means the job could not proceed
/// (output not writable); per-module problems are in the outcomes.
llvm::Expected<ExtractResult> extractCorpus(const LoadedInput &input, const ExtractOptions &options);

} // namespace mlgo
