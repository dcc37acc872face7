// The harvest room (src/harvest/): one pass of one policy over a corpus.
// Every selected module is compiled with the ML advisor in place, in
// parallel (ModuleHarvest), and the pass writes one training log per module
// plus a journal (resume), a summary and optionally the TFRecord dataset;
// HarvestLink.h adds the link of its objects. It uses the compile/,
// evaluate/ and policy/ rooms below it, and knows nothing of what composes
// several passes (explore/, run/).
#pragma once

#include "mlgo/compile/CompilerDriver.h"
#include "mlgo/evaluate/LinkStep.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/ModulePlan.h"
#include "mlgo/log/Problem.h"
#include "mlgo/policy/Policy.h"
#include "mlgo/support/Landlock.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace mlgo {

class DefaultSizes;
class ModuleCompileHooks;
struct CorpusDescription;

struct HarvestOptions {
  std::string CorpusDir, OutputDir;
  Problem Decisions = Problem::Inliner;
  CompilerSettings Compiler;
  AdvisorMode Mode = AdvisorMode::Interactive;
  std::string ModeReason; // why this mode (summary.json)
  std::string PluginPath; // plugin mode: libMLGOInlineAdvisor.so
  PolicySpec Policy;
  ModuleSelection Selection;
  unsigned NumWorkers = 0; // 0: one per hardware thread
  double TimeoutSeconds = 60;
  bool Force = false;           // redo modules the journal says are done
  std::string TFRecordPath;     // also write the dataset
  std::string ExplicitTempsDir; // keep each module's work directory there
  double ProgressInterval = 5;
  /// Run .cmd / global_command_override without screening (docs/security.md).
  bool TrustCorpusCommands = false;
  /// Directories the compiles may write besides their work directory (a
  /// compiler wrapper's cache or log): --compiler_writable_dir.
  std::vector<std::string> CompilerWritableDirs;
  /// Directories (or files) the compiles may also read: --compiler_readable_dir.
  /// Without them a compile reads only its toolchain, the system's libraries,
  /// its module's input and what the harvest passes (CompileConfinement.h).
  std::vector<std::string> CompilerReadableDirs;
  /// Run opt and llc in mlgo-compile-server's warm children instead of
  /// exec'ing them (--compile_server; CompileServerChoice.h decides).
  bool UseCompileServer = false;
  std::string CompileServerReason; // why (summary.json)
  std::string CompileServerPath;
  /// --decision_sites: with each log, which call site each decision was
  /// about (plugin mode only: see decisionSitesWritten).
  bool DecisionSites = false;
  /// --ir2vec_vocab (IR2VecVocabulary.h): the inliner's callee_embedding and
  /// caller_embedding features, from this vocabulary; "" = none.
  std::string IR2VecVocab, IR2VecVocabSha256, IR2VecKind;
  size_t IR2VecDimension = 0;
  /// --baseline_cache: a directory of default-policy native sizes shared
  /// with other runs (BaselineCache.h); "" = none.
  std::string BaselineCacheDir;
  /// --link and its companions: link the objects after the compiles.
  LinkSettings Link;
  /// What a layer above adds to each module's compile (--explore's fork
  /// chains, explore/ForkChains.h); none for a plain harvest.
  std::shared_ptr<const ModuleCompileHooks> Hooks;
};

/// Whether the run writes sites files: requested, and in plugin mode (in
/// interactive and development mode the compiler does not say which call
/// site it asks about).
bool decisionSitesWritten(const HarvestOptions &options);
/// Why a run that asked for sites files writes none.
std::string decisionSitesUnavailable(const HarvestOptions &options);

struct HarvestSummary {
  size_t Planned = 0, Ok = 0, Failed = 0, TimedOut = 0, Skipped = 0;
  size_t WithoutLog = 0; // ok modules with no decision: no log file is written
  size_t Decisions = 0;
  double Seconds = 0;
  bool Interrupted = false;
  /// Why the run stopped early (a write failed on an unusable output file
  /// system), if it did.
  std::optional<std::string> Stopped;
  /// Whether the compiles ran confined by Landlock (docs/security.md).
  LandlockSupport Confinement;
  /// The compile servers' largest peak RSS and how often one was started.
  long CompileServerPeakRssKb = 0;
  unsigned CompileServerStarts = 0;
  /// Default-policy baselines compiled this run, and taken from a cache
  /// (this directory's default_sizes.jsonl or --baseline_cache).
  size_t BaselinesComputed = 0, BaselinesCached = 0;
  size_t BaselinesStored = 0; // a default harvest's sizes written to --baseline_cache
  /// --explore: trajectories a round took from the base compiles' fork chains instead of compiling them.
  size_t Adopted = 0;
  /// With --link: what became of it (summary.json's `linked`).
  std::optional<LinkResult> Linked;
  nlohmann::ordered_json toJson(const HarvestOptions &options) const;
};

/// The journal file, one JSON line per finished module.
std::string harvestJournalPath(llvm::StringRef outputDir);

/// The options that shape the logs, keyed by flag name: the journal's
/// header. A harvest into a directory whose journal has other ones refuses.
/// Besides the compiler and policy: `log_format` (interactive for the plugin
/// and interactive modes, whose logs are identical; development) rather than
/// the mode auto happened to pick, and `shard` ("I/N").
nlohmann::ordered_json harvestJournalOptions(const HarvestOptions &options);

/// "I/N", as the journal header and summary.json record the shard.
std::string shardSpec(const ModuleSelection &selection);

/// Holding OUT's lock (OUT/.mlgo-harvest/lock, DirectoryLock.h), removes the
/// temporaries of harvest-logs' own files at OUT's top that a killed run
/// left (StaleTemporaries.h): those of summary.json, harvest.jsonl,
/// explore.jsonl, profile_max.json and profile_pol.json. Nothing else, and
/// no link, is touched.
llvm::Error removeDeadHarvestTemporaries(llvm::StringRef outputDir);

/// What a pass's compiles leave for a step after them.
struct PassOutcome {
  const CorpusDescription &Corpus;
  const std::vector<PlannedModule> &Plan;
  /// Every module's latest journal record, whatever this run's selection.
  const std::map<std::string, HarvestRecord> &Done;
  const DefaultSizes &Baselines;
};

/// What a caller adds around a pass's compiles (the link of its objects:
/// HarvestLink.h); the pass knows nothing of what they are for.
struct PassSteps {
  /// Once the corpus is planned, before anything is compiled: an error ends
  /// the run before any compile.
  std::function<llvm::Error(const CorpusDescription &, const std::vector<PlannedModule> &)> BeforeCompiles;
  /// After the compiles and the journal's compaction, before summary.json
  /// is written: it may add to the summary.
  std::function<void(const PassOutcome &, HarvestSummary &)> AfterCompiles;
};

/// One pass of one policy over the corpus: every selected module compiled
/// (or resumed from the journal), its log placed, the journal compacted,
/// summary.json and the dataset written. An Error means the job could not
/// start (corpus unreadable, output not writable, compiler unusable);
/// per-module failures are in the journal and the summary.
llvm::Expected<HarvestSummary> runHarvestPass(const HarvestOptions &options, const PassSteps &steps = {});

} // namespace mlgo
