#include "ModuleHarvest.h"

#include "mlgo/compile/CompileConfinement.h"
#include "mlgo/compile/PluginMode.h"
#include "mlgo/compile/WorkDirectory.h"
#include "mlgo/evaluate/NativeSize.h"
#include "mlgo/evaluate/RegallocReward.h"
#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestReadRules.h"
#include "mlgo/harvest/ModuleCompileHooks.h"
#include "mlgo/harvest/ModuleInputs.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/server/CompileServerProtocol.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/LineCount.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/MoveFile.h"
#include "mlgo/support/OutputFile.h"

#include "llvm/Support/FileSystem.h"

#include <chrono>

namespace mlgo {
namespace {

using Clock = std::chrono::steady_clock;

// A work directory that cannot be made: a planted link is named as one; any
// other failure is a WriteError, which stops the run on an unusable file system.
llvm::Error workDirectoryError(const std::string &work, llvm::Error error) {
  return llvm::handleErrors(std::move(error), [&](const BeneathError &e) -> llvm::Error {
    if (e.symbolicLink())
      return llvm::createStringError(e.convertToErrorCode(), "%s", e.message().c_str());
    return llvm::make_error<WriteError>(work, e.convertToErrorCode());
  });
}

} // namespace

ModuleHarvest::ModuleHarvest(const HarvestOptions &options, const CorpusDescription &corpus)
    : Options(options), Corpus(corpus), ReadExec(harvestReadExecRules(options)),
      Baselines(options.Decisions, options.Compiler) {}

llvm::Error ModuleHarvest::prepare() {
  if (std::error_code ec = llvm::sys::fs::create_directories(Options.OutputDir))
    return llvm::createStringError(ec, "cannot create %s: %s", Options.OutputDir.c_str(), ec.message().c_str());
  // Below OUT nothing is followed: a directory planted as a link is named.
  for (const char *dir : {"logs", ".mlgo-harvest", ".mlgo-harvest/work"})
    if (llvm::Error e = makeDirectoriesBeneath(Options.OutputDir, dir))
      return llvm::createStringError("cannot create %s: %s", joinPath(Options.OutputDir, dir).c_str(),
                                     llvm::toString(std::move(e)).c_str());
  if (Options.Link.stagesObjects())
    if (llvm::Error e = makeDirectoriesBeneath(Options.OutputDir, ".mlgo-harvest/objects"))
      return llvm::createStringError("cannot create %s: %s",
                                     joinPath(Options.OutputDir, ".mlgo-harvest/objects").c_str(),
                                     llvm::toString(std::move(e)).c_str());
  if (sizeRewarded()) {
    // A cache written with other options (compiler, passes) is started afresh.
    // A damaged cache too: it only saves recompiles (merge-harvest reads it alike).
    auto cache = readDefaultSizeCache(defaultSizesPath());
    bool reuse = false;
    if (cache) {
      JournalContents header;
      header.Options = cache->Options;
      if (!cache->Sizes.empty())
        header.Records.emplace_back(); // entries without a header are not reused
      reuse = !errorToBool(checkJournalOptions(header, harvestJournalOptions(Options), defaultSizesPath(), ""));
    } else {
      log::warning("starting the default-size cache afresh: " + llvm::toString(cache.takeError()));
    }
    std::map<std::string, uint64_t> known;
    if (reuse)
      for (const auto &[module, entry] : cache->Sizes)
        known[module] = entry.first;
    // Afresh: whatever is at its name (a link planted there) is removed itself.
    else if (llvm::Error e = removeBeneath(Options.OutputDir, "default_sizes.jsonl"))
      return e;
    if (llvm::Error e =
            Baselines.openRunFile(defaultSizesPath(), !reuse, harvestJournalOptions(Options), std::move(known)))
      return e;
    if (llvm::Error e = Baselines.openCache(Options.BaselineCacheDir, Options.OutputDir))
      return e;
  }
  // --link: the default's linked size is kept there too; a default
  // harvest's sizes are the baselines, stored for the next policy's.
  if (Options.Link.requested() || fillsBaselines())
    if (llvm::Error e = Baselines.openCache(Options.BaselineCacheDir, Options.OutputDir))
      return e;
  return llvm::Error::success();
}

HarvestedModule ModuleHarvest::harvest(const PlannedModule &module, size_t index, Policy &policy,
                                       CompileServerClient *server) {
  auto start = Clock::now();
  HarvestedModule done;
  ModuleRecord &record = done.Record;
  record.Module = module.Name;
  // Emptied and made without following a link: one planted as a work
  // directory (or on the way to it) would have us delete what it names.
  bool inOut = Options.ExplicitTempsDir.empty();
  std::string root = inOut ? Options.OutputDir : Options.ExplicitTempsDir;
  std::string name = inOut ? ".mlgo-harvest/work/" + std::to_string(index) : workDirectoryName(module.Name);
  std::string work = joinPath(root, name);
  if (!inOut)
    llvm::sys::fs::create_directories(root); // the user's own directory
  llvm::consumeError(removeTreeBeneath(root, name));
  if (llvm::Error e = makeDirectoriesBeneath(root, name)) {
    writeFailed(record, workDirectoryError(work, std::move(e)));
    return done;
  }
  run(module, work, policy, server, record, done.Placement);
  record.Seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (inOut)
    done.Work = name;
  if (done.Placement.Log.empty())
    removeWork(done);
  return done;
}

void ModuleHarvest::place(HarvestedModule &done) {
  const LogPlacement &p = done.Placement;
  if (!p.Log.empty()) {
    // Renamed into logs/'s subdirectory as opened without following a link.
    auto logs = openParentBeneath(Options.OutputDir, harvestLogName(done.Record.Module), /*create=*/true);
    llvm::Error placed = logs ? llvm::Error::success() : logs.takeError();
    if (!placed && !p.Sites.empty()) {
      placed = syncFile(p.Sites);
      if (!placed)
        placed = moveFileInto(p.Sites, logs->Dir.get(), baseName(p.SitesDestination), p.SitesDestination);
    }
    if (!placed)
      placed = syncFile(p.Log);
    if (!placed)
      placed = moveFileInto(p.Log, logs->Dir.get(), logs->Name, p.LogDestination);
    if (!placed)
      placed = syncDirectoryDescriptor(logs->Dir.get(), dirName(p.LogDestination));
    if (placed)
      writeFailed(done.Record, std::move(placed));
    else
      done.Record.LogWritten = true;
  }
  removeWork(done);
}

std::optional<std::string> ModuleHarvest::stopReason() const {
  std::lock_guard<std::mutex> lock(StopMutex);
  return StopReason;
}

void ModuleHarvest::stop(std::string reason) {
  std::lock_guard<std::mutex> lock(StopMutex);
  if (!StopReason)
    StopReason = std::move(reason);
  Stopped = true;
}

void ModuleHarvest::removeWork(HarvestedModule &done) {
  if (!done.Work.empty())
    llvm::consumeError(removeTreeBeneath(Options.OutputDir, done.Work));
  done.Work.clear();
}

void ModuleHarvest::writeFailed(ModuleRecord &record, llvm::Error error) {
  record.Status = "failed";
  record.Reason = "write_failed";
  llvm::handleAllErrors(
      std::move(error),
      [&](const WriteError &failure) {
        record.Detail = failure.message();
        if (failure.fileSystemUnusable()) {
          std::lock_guard<std::mutex> lock(StopMutex);
          if (!StopReason)
            StopReason = "the output file system is unusable (" + failure.message() + ")";
          Stopped = true;
        }
      },
      [&](const llvm::ErrorInfoBase &other) { record.Detail = other.message(); });
}

// Inliner policies other than the default are rewarded against the
// ordinary inliner's native size, as ml-compiler-opt does.
bool ModuleHarvest::sizeRewarded() const {
  return Options.Decisions == Problem::Inliner &&
         (Options.Policy.How == PolicySpec::Kind::Random || Options.Policy.How == PolicySpec::Kind::Exec ||
          Options.Policy.How == PolicySpec::Kind::TFLite || Options.Policy.How == PolicySpec::Kind::InProcess ||
          Options.Policy.How == PolicySpec::Kind::Replay);
}

Deadline ModuleHarvest::deadline() const {
  return Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(Options.TimeoutSeconds * 1000));
}

void ModuleHarvest::setOutcome(ModuleRecord &record, const CompileOutcome &outcome) {
  record.Status = outcome.Result == CompileOutcome::Status::Timeout ? "timeout" : statusName(outcome.Result);
  record.Reason = outcome.Reason;
  record.Detail = outcome.Detail;
  record.ExitStatus = outcome.Exit ? outcome.Exit->describe() : "";
  record.StderrTail = outcome.StderrTail;
}

CompileJob ModuleHarvest::job(std::vector<std::string> argv, const std::string &work, const char *stderrName,
                              CompileServerClient *server, const ModuleInputs &in) const {
  CompileJob job{std::move(argv),
                 joinPath(work, stderrName),
                 deadline(),
                 Options.TimeoutSeconds,
                 work,
                 Options.CompilerWritableDirs,
                 withModuleInputs(ReadExec, in.Bitcode, Options.CorpusDir)};
  // The server runs the very tools the exec path would (CompileServerChoice.h).
  if (server && Options.UseCompileServer) {
    job.Server = server;
    job.Tool = job.Argv[0] == Options.Compiler.Opt     ? "opt"
               : job.Argv[0] == Options.Compiler.Llc   ? "llc"
               : job.Argv[0] == Options.Compiler.Clang ? "clang"
                                                       : "";
  }
  return job;
}

// A second child's start-up weighs on small modules; on large ones llc is
// faster in a fresh child than on the heap opt leaves behind (measured on
// bench/harvest.sh's corpora: 4.5% less CPU on its C modules of 10-30 KiB
// of bitcode, 2% more on its C++ modules of 120-250 KiB).
bool ModuleHarvest::smallEnoughForOneChild(const std::string &bitcode) {
  constexpr uint64_t MaxBitcodeBytes = 64 << 10;
  uint64_t size = 0;
  return !llvm::sys::fs::file_size(bitcode, size) && size <= MaxBitcodeBytes;
}

// Compiles with `advisor`; leaves the object in commands.Native.
void ModuleHarvest::compile(const ModuleInputs &in, const AdvisorSetup &advisor, const std::string &work,
                            Policy *policy, CompileServerClient *server, llvm::raw_ostream *log, ModuleRecord &record,
                            ModuleCommands &commands) {
  commands = moduleCommands(Options.Compiler, Options.Decisions, in, advisor, work);
  CompileJob compileJob = job(commands.Compile, work, "compile.stderr", server, in);
  // Through the server, opt's child of a small module goes on to llc's
  // work on the module it holds (docs/compile-server.md). Not with extra
  // compiler flags: they are opt's, and llc, parsing its command line over
  // opt's, would keep them.
  bool oneChild = commands.Codegen && compileJob.Server && compileJob.Tool == "opt" &&
                  Options.Decisions == Problem::Inliner && Options.Compiler.ExtraFlags.empty();
  bool codegenToo = oneChild && smallEnoughForOneChild(in.Bitcode);
  // A hook above the harvest (--explore's fork chains) may change such a
  // compile; it then needs llc in the same child.
  bool changed = oneChild && advisor.Enabled && advisor.Mode == AdvisorMode::Plugin && Options.Hooks &&
                 Options.Hooks->changeCompile(compileJob, work);
  if (changed)
    codegenToo = true;
  if (codegenToo)
    compileJob.Codegen = *commands.Codegen;
  CompileOutcome outcome = advisor.Enabled && advisor.Mode == AdvisorMode::Interactive
                               ? runInteractive(compileJob, advisor.ChannelBase, Options.Decisions, *policy, *log)
                               : runCompile(compileJob);
  if (changed)
    Options.Hooks->changedCompileEnded(outcome, work);
  if (advisor.Enabled && advisor.Mode == AdvisorMode::Plugin)
    explainPluginFailure(outcome, advisor.PluginPath);
  explainUnreadableInputs(outcome, in.CommandLine, compileJob);
  record.Decisions = outcome.Decisions;
  record.Streams = outcome.Streams;
  setOutcome(record, outcome);
  if (codegenToo) {
    std::string marker = server::codegenStartedMarker(commands.Native);
    if (outcome.Result == CompileOutcome::Status::Failed && record.Reason == "compiler_failed" &&
        llvm::sys::fs::exists(marker))
      record.Reason = "codegen_failed"; // as when llc runs on its own
    llvm::sys::fs::remove(marker);
  }
  if (outcome.Result != CompileOutcome::Status::Ok || !commands.Codegen || codegenToo)
    return;
  CompileOutcome codegen = runCompile(job(*commands.Codegen, work, "codegen.stderr", server, in));
  if (codegen.Result != CompileOutcome::Status::Ok) {
    setOutcome(record, codegen);
    record.Reason = codegen.Reason == "compiler_failed" ? "codegen_failed" : codegen.Reason;
  }
}

void ModuleHarvest::run(const PlannedModule &module, const std::string &work, Policy &policy,
                        CompileServerClient *server, ModuleRecord &record, LogPlacement &placement) {
  auto in = harvestModuleInputs(Options, Corpus, module.Name);
  if (!in) {
    llvm::Error error = in.takeError();
    record.Reason = error.isA<UnsafeCommandLineError>() ? "unsafe_command_line" : "bad_module";
    record.Detail = llvm::toString(std::move(error));
    return;
  }
  if (llvm::Error e = policy.beginModule(module.Name)) {
    record.Reason = "policy_error";
    record.Detail = llvm::toString(std::move(e));
    return;
  }
  AdvisorSetup advisor;
  advisor.Mode = Options.Mode;
  advisor.ChannelBase = joinPath(work, "channel");
  advisor.TrainingLog = joinPath(work, "training.log");
  if (Options.Policy.How == PolicySpec::Kind::Model)
    advisor.ModelDir = Options.Policy.ModelDir;
  advisor.PluginPath = Options.PluginPath;
  advisor.PluginPolicy = pluginPolicy(Options.Policy);
  advisor.ModuleName = module.Name; // seeds the plugin's random policy as the interactive one
  if (decisionSitesWritten(Options))
    advisor.SitesFile = joinPath(work, "sites.jsonl");
  advisor.IR2VecVocab = Options.IR2VecVocab;
  advisor.IR2VecKind = Options.IR2VecKind;

  std::string interactiveLog = joinPath(work, "module.log");
  ModuleCommands commands;
  {
    // Only the interactive mode writes the log here (the compiler writes
    // the others'): no file is made that nothing writes, as a file made
    // and removed costs --explore one inode per trajectory.
    std::optional<OutputFile> log;
    if (Options.Mode == AdvisorMode::Interactive)
      if (llvm::Error e = log.emplace(interactiveLog).openError()) {
        writeFailed(record, std::move(e));
        return;
      }
    bool taken = false;
    if (Options.Hooks) {
      commands = moduleCommands(Options.Compiler, Options.Decisions, *in, advisor, work);
      taken = Options.Hooks->takeInsteadOfCompile(module.Name, work, advisor, commands, record);
    }
    if (!taken) {
      // The module's own plugin policy (a replay's decisions file) only
      // for a compile: an adopted trajectory needs none.
      if (Options.Mode == AdvisorMode::Plugin) {
        auto perModule = policy.pluginPolicyForModule(work);
        if (!perModule) {
          record.Reason = "policy_error";
          record.Detail = llvm::toString(perModule.takeError());
          return;
        }
        if (!perModule->empty())
          advisor.PluginPolicy = *perModule;
      }
      compile(*in, advisor, work, &policy, server, log ? &*log : nullptr, record, commands);
      if (Options.Hooks)
        Options.Hooks->compiled(module.Name, work, record.Status == "ok");
    }
    // A full disk or a file size limit costs this module, not the run.
    if (llvm::Error e = log ? log->finish() : llvm::Error::success()) {
      if (record.Status == "interrupted")
        llvm::consumeError(std::move(e));
      else
        writeFailed(record, std::move(e));
    }
  }
  if (record.Status != "ok") {
    policy.abandonModule();
    return;
  }
  // Development mode and the plugin write the log themselves (the plugin only once it has a decision).
  bool compilerLogs = Options.Mode != AdvisorMode::Interactive;
  std::string produced = compilerLogs ? advisor.TrainingLog : interactiveLog;
  // A module without decisions gets no log (readers built like LLVM's
  // log_reader.py fail on a log without observations): an inliner module
  // without call sites, a regalloc module without evictions, or one that
  // never opened the channel (llc opens it at the first function body).
  bool hasLog = compilerLogs ? llvm::sys::fs::exists(produced) : record.Streams > 0;
  if (hasLog && compilerLogs && !checkDevelopmentLog(produced, record))
    return;
  hasLog = hasLog && record.Decisions > 0;
  if (llvm::Error e = policy.endModule(record.Decisions)) {
    record.Status = "failed";
    record.Reason = "policy_error";
    record.Detail = llvm::toString(std::move(e));
    return;
  }
  if (hasLog && Options.Mode == AdvisorMode::Interactive && isRegalloc(Options.Decisions)) {
    auto scores = regallocScores(commands.Remarks);
    if (!scores) {
      record.Status = "failed";
      record.Reason = "bad_remarks";
      record.Detail = "cannot compute regalloc rewards: " + llvm::toString(scores.takeError());
      return;
    }
    std::string rewarded = joinPath(work, "rewarded.log");
    auto total = addRegallocRewards(produced, rewarded, *scores);
    if (!total) {
      llvm::Error error = total.takeError();
      if (error.isA<WriteError>()) {
        writeFailed(record, std::move(error));
        return;
      }
      record.Status = "failed";
      record.Reason = "bad_training_log";
      record.Detail = "cannot add regalloc rewards: " + llvm::toString(std::move(error));
      return;
    }
    record.RegallocScore = *total;
    produced = rewarded;
  }

  auto size = berkeleyTextSize(commands.Native);
  if (!size) {
    record.Status = "failed";
    record.Reason = "no_native_object";
    record.Detail = llvm::toString(size.takeError());
    return;
  }
  record.NativeSize = *size;
  if (fillsBaselines())
    Baselines.fill(module.Name, *in, *size);
  // --link: the object outlives the work directory until the link.
  if (Options.Link.stagesObjects())
    if (llvm::Error e = stageObject(commands.Native, module.Name)) {
      writeFailed(record, std::move(e));
      return;
    }
  if (!hasLog)
    return;
  if (sizeRewarded()) {
    std::optional<uint64_t> baseline = defaultSize(module.Name, *in, work, server, record);
    if (!baseline)
      return;
    record.DefaultSize = *baseline;
    record.Reward = sizeReward(*size, *baseline);
  }
  // The log appears under its final name only once the module is done.
  std::string destination = harvestLogPath(Options.OutputDir, module.Name);
  if (auto logs = openParentBeneath(Options.OutputDir, harvestLogName(module.Name), /*create=*/true); !logs) {
    record.Status = "failed";
    record.Reason = "write_failed";
    record.Detail = llvm::toString(logs.takeError());
    return;
  }
  if (!advisor.SitesFile.empty()) {
    if (!checkSites(advisor.SitesFile, record))
      return;
    placement.Sites = advisor.SitesFile;
    placement.SitesDestination = harvestSitesPath(Options.OutputDir, module.Name);
  }
  placement.Log = produced;
  placement.LogDestination = destination;
}

// Into OUT/.mlgo-harvest/objects/ as opened without following a link: a
// link planted there is replaced, never written through.
llvm::Error ModuleHarvest::stageObject(const std::string &object, const std::string &module) {
  std::string staged = stagedObjectPath(Options.OutputDir, module);
  auto into = openParentBeneath(Options.OutputDir, stagedObjectName(module), /*create=*/true);
  if (!into)
    return into.takeError();
  if (Options.ExplicitTempsDir.empty())
    return moveFileInto(object, into->Dir.get(), into->Name, staged);
  // --explicit_temps_dir keeps the work directory whole.
  return copyFileInto(object, into->Dir.get(), into->Name, staged);
}

// The plugin writes one site per observation; a sites file that does not
// align with the log would mislead every reader.
bool ModuleHarvest::checkSites(const std::string &path, ModuleRecord &record) {
  auto lines = countLines(path);
  if (lines && *lines == record.Decisions)
    return true;
  record.Status = "failed";
  record.Reason = "bad_decision_sites";
  record.Detail = lines ? "the plugin's sites file has " + std::to_string(*lines) + " records for " +
                              std::to_string(record.Decisions) + " decisions"
                        : "cannot read the plugin's sites file: " + llvm::toString(lines.takeError());
  return false;
}

bool ModuleHarvest::checkDevelopmentLog(const std::string &path, ModuleRecord &record) {
  size_t observations = 0;
  double reward = 0; // regalloc: the sum of the functions' rewards
  if (llvm::Error error = visitLog(path, [&](TrainingLogReader &reader, TrainingLogReader::Event event) {
        observations += event == TrainingLogReader::Event::Observation;
        if (event == TrainingLogReader::Event::Outcome && reader.header().Score)
          reward += reader.header().Score->elementAsDouble(reader.outcome(), 0);
        return llvm::Error::success();
      })) {
    record.Status = "failed";
    record.Reason = "bad_training_log";
    record.Detail = "the log the compiler wrote is not a valid training log: " + llvm::toString(std::move(error));
    return false;
  }
  record.Decisions = observations;
  if (Options.Mode == AdvisorMode::Plugin && isRegalloc(Options.Decisions))
    record.RegallocScore = reward; // LLVM's RegAllocScore, computed by the plugin
  return true;
}

// A default harvest compiles exactly the baseline (the ordinary inliner's
// code, byte for byte): with --baseline_cache, its sizes fill the cache.
bool ModuleHarvest::fillsBaselines() const {
  return Options.Decisions == Problem::Inliner && Options.Policy.How == PolicySpec::Kind::Default &&
         !Options.BaselineCacheDir.empty();
}

// The ordinary inliner's native size, computed once per module and kept
// (evaluate/DefaultSizes.h); nullopt, with `record` saying why, when it
// cannot be had.
std::optional<uint64_t> ModuleHarvest::defaultSize(const std::string &module, const ModuleInputs &in,
                                                   const std::string &work, CompileServerClient *server,
                                                   ModuleRecord &record) {
  if (std::optional<uint64_t> known = Baselines.find(module, in))
    return known;
  std::string baselineWork = joinPath(work, "baseline");
  llvm::sys::fs::create_directories(baselineWork);
  AdvisorSetup none;
  none.Enabled = false; // the ordinary inliner
  ModuleRecord baseline;
  ModuleCommands commands;
  compile(in, none, baselineWork, nullptr, server, nullptr, baseline, commands);
  if (baseline.Status == "interrupted") {
    record.Status = "interrupted"; // not the module's failure: redone on resume
    return std::nullopt;
  }
  auto size = baseline.Status == "ok" ? berkeleyTextSize(commands.Native)
                                      : llvm::Expected<uint64_t>(llvm::createStringError(baseline.Detail));
  if (!size) {
    record.Status = "failed";
    record.Reason = "baseline_failed";
    record.Detail = "the default-inliner compile for the reward failed: " + llvm::toString(size.takeError());
    return std::nullopt;
  }
  Baselines.computed(module, in, *size);
  return *size;
}

} // namespace mlgo
