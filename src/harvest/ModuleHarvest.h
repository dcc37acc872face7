// One module of a harvest: its work directory, its compile under the run's
// policy (or what a hook above takes instead, ModuleCompileHooks.h), the
// checks of what the compiler wrote, its reward against the default's size
// (evaluate/DefaultSizes.h), and the placement of its log and sites in
// OUT/logs/ once they are durable. Harvester.cpp runs it on every worker.
// Internal to the harvest room.
#pragma once

#include "mlgo/compile/CompileServerClient.h"
#include "mlgo/compile/CompilerDriver.h"
#include "mlgo/compile/InteractiveSession.h"
#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/evaluate/DefaultSizes.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/Harvester.h"
#include "mlgo/harvest/ModulePlan.h"
#include "mlgo/policy/Policy.h"
#include "mlgo/support/Landlock.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace mlgo {

// The journal record a module's harvest produces (mlgo/harvest/HarvestJournal.h).
using ModuleRecord = HarvestRecord;

// Where a harvested module's files go once they are durable (ModuleHarvest::place).
struct LogPlacement {
  std::string Log, LogDestination;     // empty: no log
  std::string Sites, SitesDestination; // empty: no sites file
};

struct HarvestedModule {
  ModuleRecord Record;
  LogPlacement Placement;
  std::string Work; // below OUT, removed once placed; empty: kept (--explicit_temps_dir)
};

class ModuleHarvest {
public:
  ModuleHarvest(const HarvestOptions &options, const CorpusDescription &corpus);

  /// Makes OUT's directories and opens the default sizes' file and cache.
  llvm::Error prepare();

  /// Compiles a module; its log, if any, still lies in its work directory
  /// (place() puts it in logs/).
  HarvestedModule harvest(const PlannedModule &module, size_t index, Policy &policy, CompileServerClient *server);

  /// Makes a harvested module's log (and sites file) durable in logs/, as
  /// its journal record will promise: each file synced, then renamed (a
  /// copy when the work directory is on another file system:
  /// --explicit_temps_dir), then logs/ synced (docs/harvest-resume.md#durability). The
  /// sites file goes first: a log in place promises its sites. Runs on the
  /// harvest's committing thread, while the workers compile on.
  void place(HarvestedModule &done);

  /// Set once a write failed because the output file system is unusable
  /// (full, read-only, failing): the remaining modules would all fail.
  std::optional<std::string> stopReason() const;

  bool stopped() const { return Stopped.load(std::memory_order_relaxed); }

  /// Stops the run (e.g. the journal cannot be appended to).
  void stop(std::string reason);

  /// The default's sizes (the link reads the cache's keys).
  const DefaultSizes &baselines() const { return Baselines; }

private:
  void removeWork(HarvestedModule &done);
  void writeFailed(ModuleRecord &record, llvm::Error error);
  std::string defaultSizesPath() const { return joinPath(Options.OutputDir, "default_sizes.jsonl"); }
  bool sizeRewarded() const;
  Deadline deadline() const;
  void setOutcome(ModuleRecord &record, const CompileOutcome &outcome);
  CompileJob job(std::vector<std::string> argv, const std::string &work, const char *stderrName,
                 CompileServerClient *server, const ModuleInputs &in) const;
  static bool smallEnoughForOneChild(const std::string &bitcode);
  void compile(const ModuleInputs &in, const AdvisorSetup &advisor, const std::string &work, Policy *policy,
               CompileServerClient *server, llvm::raw_ostream *log, ModuleRecord &record, ModuleCommands &commands);
  void run(const PlannedModule &module, const std::string &work, Policy &policy, CompileServerClient *server,
           ModuleRecord &record, LogPlacement &placement);
  llvm::Error stageObject(const std::string &object, const std::string &module);
  bool checkSites(const std::string &path, ModuleRecord &record);
  bool checkDevelopmentLog(const std::string &path, ModuleRecord &record);
  bool fillsBaselines() const;
  std::optional<uint64_t> defaultSize(const std::string &module, const ModuleInputs &in, const std::string &work,
                                      CompileServerClient *server, ModuleRecord &record);

  const HarvestOptions &Options;
  const CorpusDescription &Corpus;
  ReadExecRules ReadExec; // what every compile may read and execute, besides its module's input
  DefaultSizes Baselines;
  mutable std::mutex StopMutex;
  std::optional<std::string> StopReason;
  std::atomic<bool> Stopped{false};
};

} // namespace mlgo
