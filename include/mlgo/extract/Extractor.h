// Extracts a corpus from loaded candidates: plans (dedup, naming), extracts
// in parallel with oneTBB, writes module files atomically, journals every
// result, and writes the report and corpus_description.json.
#pragma once

#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/extract/CmdFilter.h"
#include "mlgo/extract/ExtractReport.h"
#include "mlgo/extract/ModuleOutcome.h"
#include "mlgo/extract/ObjectCandidate.h"
#include "mlgo/support/DirectoryLock.h"

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
  /// The files the tool writes at the output's top besides
  /// corpus_description.json (extract-ir: link_order.json). A run removes
  /// their temporaries that a killed run left, as it removes those of
  /// corpus_description.json and of its own report and journal.
  std::vector<std::string> OwnFiles;
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
  /// The output directory's lock, still held: a tool that writes more
  /// files there (extract-ir's link_order.json) keeps it until they are
  /// written, so that a run that finds its temporaries knows they are a dead
  /// run's.
  DirectoryLock Lock;
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
