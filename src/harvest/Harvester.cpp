#include "mlgo/harvest/Harvester.h"

#include "ModuleHarvest.h"
#include "mlgo/compile/ModeSelection.h"
#include "mlgo/compile/PluginMode.h"
#include "mlgo/compile/WorkDirectory.h"
#include "mlgo/evaluate/DefaultSizes.h"
#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/HarvestReadRules.h"
#include "mlgo/harvest/ModuleCompileHooks.h"
#include "mlgo/log/DatasetFile.h"
#include "mlgo/log/LogDataset.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/DirectoryLock.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/Progress.h"
#include "mlgo/support/SerialQueue.h"
#include "mlgo/support/StaleTemporaries.h"
#include "mlgo/support/Version.h"

#include "llvm/Support/FileSystem.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <csignal>
#include <map>
#include <optional>
#include <set>
#include <sys/resource.h>
#include <thread>

namespace mlgo {
namespace {

using Clock = std::chrono::steady_clock;

// Finished modules waiting for their syncs, per worker: enough to cover a
// slow sync, few enough to bound the work directories left on disk.
constexpr size_t PendingPlacementsPerWorker = 2;

std::string logPath(const HarvestOptions &o, const std::string &module) { return harvestLogPath(o.OutputDir, module); }

// A module's log and the sites file that describes it come and go together.
// Module names nest (sub/m0): neither removal follows a link planted in
// OUT/logs, which would make us delete files we do not own.
llvm::Error removeLog(const HarvestOptions &o, const std::string &module) {
  if (llvm::Error e = removeBeneath(o.OutputDir, harvestSitesName(module)))
    return e;
  return removeBeneath(o.OutputDir, harvestLogName(module));
}

llvm::Expected<std::unique_ptr<Policy>> makePolicy(const HarvestOptions &options, const std::string &stderrPath) {
  switch (options.Policy.How) {
  case PolicySpec::Kind::TFLite:
    if (options.Mode == AdvisorMode::Plugin) {
      // The regalloc plugin has no probe: a model that cannot answer the
      // problem is refused here, before any compile, as interactively.
      if (isRegalloc(options.Decisions))
        if (auto model = makeTFLitePolicy(options.Policy.ModelDir, options.Decisions); !model)
          return model.takeError();
      return makeDefaultPolicy(); // the compiler loads the model and decides: no copy here
    }
    return makeTFLitePolicy(options.Policy.ModelDir, options.Decisions); // loaded once per worker
  case PolicySpec::Kind::Random:
    return makeRandomPolicy(options.Policy.Probability, options.Policy.Seed);
  case PolicySpec::Kind::Replay: {
    // A `then` may name the run's model or command only (PolicySpec).
    ReplayThen then{options.Policy.ModelDir, {}, stderrPath};
    if (!options.Policy.Command.empty()) {
      then.Exec.How = PolicySpec::Kind::Exec;
      then.Exec.Command = options.Policy.Command;
      then.Exec.ExecCertainty = options.Policy.ExecCertainty;
    }
    return makeReplayPolicy(options.Policy.ReplayFile, then);
  }
  case PolicySpec::Kind::Exec:
    return makeExecPolicy(options.Policy.Command, stderrPath, options.Policy.ExecCertainty);
  default:
    return makeDefaultPolicy(); // model: the compiler decides (development mode)
  }
}

llvm::Error writeDataset(const HarvestOptions &options, const std::vector<PlannedModule> &plan,
                         const std::map<std::string, HarvestRecord> &done) {
  std::map<std::string, const HarvestRecord *> records;
  for (const auto &[name, record] : done)
    records.emplace(name, &record);
  auto totals = writeTFRecordDataset(harvestDatasetInputs(options.Decisions, options.OutputDir, plan, records),
                                     options.TFRecordPath);
  return totals ? llvm::Error::success() : totals.takeError();
}

} // namespace

std::string harvestJournalPath(llvm::StringRef outputDir) { return joinPath(outputDir, "harvest.jsonl"); }

llvm::Error removeDeadHarvestTemporaries(llvm::StringRef outputDir) {
  // What harvest-logs (and its --explore) writes at OUT's top through a
  // temporary and a rename: the logs are modules' data and are not listed.
  static const std::set<std::string, std::less<>> OwnFiles = {"summary.json", "harvest.jsonl", "explore.jsonl",
                                                              "profile_max.json", "profile_pol.json"};
  auto top = removeStaleTemporaries(outputDir, "", OwnFiles);
  return top ? llvm::Error::success() : top.takeError();
}

bool decisionSitesWritten(const HarvestOptions &o) { return o.DecisionSites && o.Mode == AdvisorMode::Plugin; }

std::string decisionSitesUnavailable(const HarvestOptions &o) {
  return std::string("no sites files in ") + modeName(o.Mode) +
         " mode: the compiler does not say which call site it asks about (the plugin does: --mode=plugin)";
}

nlohmann::ordered_json harvestJournalOptions(const HarvestOptions &o) {
  nlohmann::ordered_json j;
  j["corpus"] = o.CorpusDir;
  j["problem"] = problemName(o.Decisions);
  j["compiler"] = o.Compiler.Kind == CompilerKind::Opt ? "opt" : o.Compiler.Kind == CompilerKind::Llc ? "llc" : "clang";
  if (o.Compiler.Kind == CompilerKind::Opt) {
    j["opt_path"] = o.Compiler.Opt;
    j["passes"] = o.Compiler.Passes;
  }
  if (o.Compiler.Kind != CompilerKind::Clang)
    j["llc_path"] = o.Compiler.Llc;
  else
    j["clang_path"] = o.Compiler.Clang;
  if (!o.Compiler.ExtraFlags.empty())
    j["extra_compiler_flags"] = o.Compiler.ExtraFlags;
  // What shapes the log, not how --mode=auto chose: the plugin writes the
  // interactive mode's log byte for byte, so a shard whose plugin probe
  // failed once (and ran interactive) still resumes its own journal.
  j["log_format"] = o.Mode == AdvisorMode::Development ? "development" : "interactive";
  // Absent unless written: earlier journals stay comparable.
  if (decisionSitesWritten(o))
    j["decision_sites"] = true;
  // The embeddings in the logs depend on the vocabulary's content, not on
  // where it lies.
  if (!o.IR2VecVocab.empty())
    j["ir2vec"] = {{"vocab_sha256", o.IR2VecVocabSha256},
                   {"dimension", o.IR2VecDimension},
                   {"kind", o.IR2VecKind.empty() ? "default" : o.IR2VecKind}};
  j["policy"] = o.Policy.describe();
  // A shard directory belongs to one shard of one N (a resubmitted task
  // with another index must not mix its modules into it).
  j["shard"] = shardSpec(o.Selection);
  return j;
}

std::string shardSpec(const ModuleSelection &selection) {
  return std::to_string(selection.ShardIndex) + "/" + std::to_string(selection.ShardCount);
}

nlohmann::ordered_json HarvestSummary::toJson(const HarvestOptions &o) const {
  nlohmann::ordered_json j;
  j["mlgo_version"] = versionString();
  j["corpus"] = o.CorpusDir;
  j["problem"] = problemName(o.Decisions);
  j["compiler"] = o.Compiler.Kind == CompilerKind::Opt ? "opt" : o.Compiler.Kind == CompilerKind::Llc ? "llc" : "clang";
  j["mode"] = modeName(o.Mode);
  j["mode_reason"] = o.ModeReason;
  j["policy"] = o.Policy.describe();
  j["shard"] = shardSpec(o.Selection);
  j["confinement"] = {{"active", Confinement.Abi > 0},
                      {"landlock_abi", Confinement.Abi},
                      {"warning", Confinement.Abi > 0 ? "" : "compiles were not confined: " + Confinement.Problem}};
  if (Confinement.Abi > 0) { // besides these, each compile reads its work directory and its module's input
    ReadExecRules rules = harvestReadExecRules(o);
    j["confinement"]["readable"] = rules.Readable;
    j["confinement"]["executable"] = rules.Executable;
  }
  j["compile_server"] = {{"used", o.UseCompileServer},
                         {"reason", o.CompileServerReason},
                         {"peak_rss_kb", CompileServerPeakRssKb},
                         {"starts", CompileServerStarts}};
  j["baselines"] = {{"computed", BaselinesComputed}, {"cached", BaselinesCached}};
  if (BaselinesStored)
    j["baselines"]["stored"] = BaselinesStored;
  if (o.Hooks && o.Hooks->taken())
    j["adopted_from_chains"] = Adopted;
  if (o.DecisionSites)
    j["decision_sites"] = {{"written", decisionSitesWritten(o)},
                           {"reason", decisionSitesWritten(o) ? "" : decisionSitesUnavailable(o)}};
  if (Linked)
    j["linked"] = Linked->toJson();
  j["interrupted"] = Interrupted;
  if (Stopped)
    j["stopped"] = *Stopped;
  j["modules"] = {{"planned", Planned},      {"ok", Ok},
                  {"failed", Failed},        {"timeout", TimedOut},
                  {"skipped_done", Skipped}, {"without_log", WithoutLog}};
  j["decisions"] = Decisions;
  j["seconds"] = Seconds;
  j["decisions_per_second"] = Seconds > 0 ? Decisions / Seconds : 0.0;
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage); // the harvester's own memory, not its compilers'
  j["harvester_peak_rss_kb"] = usage.ru_maxrss;
  j["harvester_cpu_seconds"] = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                               static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  return j;
}

llvm::Expected<HarvestSummary> runHarvestPass(const HarvestOptions &options, const PassSteps &steps) {
  // Before anything in the output directory is read or removed; the lock's
  // directory made without following a link planted in its place.
  if (std::error_code ec = llvm::sys::fs::create_directories(options.OutputDir))
    return llvm::createStringError(ec, "cannot create %s: %s", options.OutputDir.c_str(), ec.message().c_str());
  if (llvm::Error e = makeDirectoriesBeneath(options.OutputDir, ".mlgo-harvest"))
    return e;
  auto lock = DirectoryLock::acquire(options.OutputDir, joinPath(options.OutputDir, ".mlgo-harvest"));
  if (!lock)
    return lock.takeError();
  // Ours now: what a killed run left half-written goes (StaleTemporaries.h).
  if (llvm::Error e = removeDeadHarvestTemporaries(options.OutputDir))
    return e;
  auto planned = planCorpus(options.CorpusDir, options.Selection);
  if (!planned)
    return planned.takeError();
  const CorpusDescription *corpus = &planned->Corpus;
  const std::vector<PlannedModule> *plan = &planned->Plan;
  {
    // A staged object copied in from another file system (--explicit_temps_dir)
    // goes through a temporary beside it (MoveFile.h).
    std::set<std::string, std::less<>> objects;
    for (const PlannedModule &module : *plan)
      objects.insert(workDirectoryName(module.Name) + ".o");
    auto removed = removeStaleTemporaries(options.OutputDir, ".mlgo-harvest/objects", objects);
    if (!removed)
      return removed.takeError();
  }
  if (steps.BeforeCompiles)
    if (llvm::Error e = steps.BeforeCompiles(*corpus, *plan))
      return e;

  // A dying compiler or policy must not kill us, nor a file size limit
  // (writes fail with EFBIG instead: write_failed); children get both back.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
  ModuleHarvest harvest(options, *corpus);
  if (llvm::Error e = harvest.prepare())
    return e;

  // Resume: modules whose latest journal line is ok and whose log (if it
  // wrote one) exists. The journal must come from the same options.
  std::string journalPath = harvestJournalPath(options.OutputDir);
  nlohmann::ordered_json journalOptions = harvestJournalOptions(options);
  auto earlier = readHarvestJournal(journalPath);
  if (!earlier)
    return earlier.takeError();
  JournalContents header; // the options check of the shared journal
  header.Options = earlier->Options;
  if (!earlier->Latest.empty())
    header.Records.emplace_back();
  if (earlier->Options && earlier->Options->contains("shard") &&
      (*earlier->Options)["shard"] != journalOptions["shard"])
    return llvm::createStringError("%s was written by shard %s, and this run is shard %s: every shard needs its own "
                                   "--output_dir (a Slurm task rerun must get the same index and N; docs/cluster.md)",
                                   journalPath.c_str(), (*earlier->Options)["shard"].dump().c_str(),
                                   journalOptions["shard"].dump().c_str());
  if (llvm::Error e =
          checkJournalOptions(header, journalOptions, journalPath,
                              "Its logs would not be comparable: use another --output_dir, or the earlier options."))
    return e;
  std::map<std::string, HarvestRecord> done;
  for (HarvestJournalLine &line : earlier->Latest) {
    // The journal describes every log: one its record does not promise (a
    // module that failed after an earlier version left its log) goes.
    auto present = line.Record.hasLog() ? llvm::Expected<bool>(false)
                                        : existsBeneath(options.OutputDir, harvestLogName(line.Record.Module));
    if (!present)
      return present.takeError();
    if (*present) {
      log::info(line.Record.Module + ": removing logs/" + line.Record.Module + ".log, which its journal record (" +
                line.Record.Status + ", log_written " + (line.Record.LogWritten ? "true" : "false") +
                ") does not describe");
      if (llvm::Error e = removeLog(options, line.Record.Module))
        return llvm::createStringError("cannot remove %s: %s", logPath(options, line.Record.Module).c_str(),
                                       llvm::toString(std::move(e)).c_str());
    }
    done.emplace(line.Record.Module, std::move(line.Record));
  }
  JournalAppender journal;
  if (llvm::Error e = journal.open(journalPath, /*truncate=*/false, journalOptions))
    return e;
  std::vector<size_t> todo;
  HarvestSummary summary;
  summary.Confinement = landlockSupport();
  if (summary.Confinement.Abi == 0)
    log::warning("compiles run without write confinement: " + summary.Confinement.Problem + " (docs/security.md)");
  summary.Planned = plan->size();
  size_t recompiledForLink = 0;
  for (size_t i = 0; i < plan->size(); ++i) {
    const std::string &name = (*plan)[i].Name;
    auto it = done.find(name);
    bool finished = it != done.end() && it->second.ok();
    if (finished && it->second.LogWritten) {
      // A present log is a regular file: one planted as a link (to another
      // valid log) is named, never taken as this module's trajectory.
      auto log = openRegularFileBeneath(options.OutputDir, harvestLogName(name));
      if (!log) {
        llvm::Error error = log.takeError();
        if (!consumeIfMissing(error))
          return std::move(error);
      }
      finished = static_cast<bool>(log);
    }
    // --link needs every object: one removed after an earlier link is made
    // again, and so is anything but a regular file reached through no link.
    bool objectMissing = false;
    if (finished && options.Link.stagesObjects()) {
      auto object = openRegularFileBeneath(options.OutputDir, stagedObjectName(name));
      if (!object) {
        llvm::Error error = object.takeError();
        if (!consumeIfMissing(error))
          log::warning("--link: " + name + ": compiling again: " + llvm::toString(std::move(error)));
        objectMissing = true;
      }
    }
    recompiledForLink += objectMissing && !options.Force;
    if (finished && !objectMissing && !options.Force)
      ++summary.Skipped;
    else
      todo.push_back(i);
  }
  if (recompiledForLink)
    log::info("--link: compiling again " + std::to_string(recompiledForLink) +
              " modules done by an earlier run whose objects are gone (--keep_objects keeps them)");
  if (summary.Skipped)
    log::info("resuming: " + std::to_string(summary.Skipped) + " of " + std::to_string(plan->size()) +
              " modules are already done (--force redoes them)");

  unsigned workers = options.NumWorkers ? options.NumWorkers : std::max(1u, std::thread::hardware_concurrency());
  tbb::task_arena arena(static_cast<int>(workers));
  std::vector<std::unique_ptr<Policy>> policies(workers + 1);
  for (size_t slot = 0; slot < policies.size(); ++slot) {
    auto made = makePolicy(options, joinPath(options.OutputDir, "policy." + std::to_string(slot) + ".stderr"));
    if (!made)
      return made.takeError();
    policies[slot] = std::move(*made);
  }

  // One compile server per worker slot, started at its first compile.
  std::vector<std::unique_ptr<CompileServerClient>> servers(workers + 1);
  if (options.UseCompileServer)
    for (size_t slot = 0; slot < servers.size(); ++slot)
      servers[slot] = std::make_unique<CompileServerClient>(CompileServerSettings{
          options.CompileServerPath,
          options.Mode == AdvisorMode::Plugin ? std::vector<std::string>{options.PluginPath}
                                              : std::vector<std::string>{},
          // The plugin (inliner or regalloc) loads once per server; only the
          // inliner's has a policy to prepare.
          options.Mode == AdvisorMode::Plugin && options.Decisions == Problem::Inliner ? pluginPolicy(options.Policy)
                                                                                       : "",
          joinPath(joinPath(options.OutputDir, ".mlgo-harvest"), "compile-server." + std::to_string(slot) + ".stderr"),
          options.Compiler.Kind == CompilerKind::Clang});

  // The plan lists the largest modules first; each worker takes the next one
  // when it is free. (Split into ranges, the second worker started half-way
  // down the list and big modules ran last, beside an idle worker.)
  std::atomic<size_t> nextTodo{0};

  Progress progress("modules", todo.size(), options.ProgressInterval);
  // Placing logs and appending the journal: one thread, after the workers'
  // compiles, so that a worker's next compile need not wait for the disk.
  SerialQueue committer(PendingPlacementsPerWorker * workers);
  auto start = Clock::now();
  arena.execute([&] {
    tbb::parallel_for(0u, workers, [&](unsigned) {
      for (size_t k; (k = nextTodo.fetch_add(1)) < todo.size();) {
        if (interruptRequested() || harvest.stopped())
          return;
        int slot = tbb::this_task_arena::current_thread_index();
        size_t at = slot >= 0 && static_cast<size_t>(slot) < policies.size() ? slot : workers;
        Policy &policy = *policies[at];
        size_t i = todo[k];
        HarvestedModule done = harvest.harvest((*plan)[i], i, policy, servers[at].get());
        // Not recorded: redone on resume (its log was never placed).
        if (done.Record.Status == "interrupted")
          return;
        // The syncs and the journal line on the committing thread, in order.
        committer.submit([&, done = std::move(done)]() mutable {
          harvest.place(done);
          ModuleRecord &record = done.Record;
          // Redone and without a log now (failed, timed out, no decisions): the
          // earlier run's log goes before the record that says so is written.
          if (!record.LogWritten)
            if (llvm::Error e = removeLog(options, record.Module))
              harvest.stop("cannot remove the earlier log of " + record.Module + ": " + llvm::toString(std::move(e)));
          if (llvm::Error e = journal.append(record.toJson()))
            harvest.stop(llvm::toString(std::move(e))); // finished modules are kept; the rest are redone
          if (record.Status != "ok")
            log::info(record.Module + ": " + record.Status + ": " + record.Detail);
          summary.Decisions += record.Decisions;
          progress.count(record.Decisions, "decisions");
          progress.advance(record.Status == "ok");
        });
        reapOrphans(); // what our children left behind, adopted as their subreaper
      }
    });
  });
  committer.drain();
  progress.finish();
  policies.clear();
  for (const auto &server : servers)
    if (server) {
      summary.CompileServerPeakRssKb = std::max(summary.CompileServerPeakRssKb, server->peakRssKb());
      summary.CompileServerStarts += server->starts();
    }
  servers.clear();
  summary.Seconds = std::chrono::duration<double>(Clock::now() - start).count();
  summary.BaselinesComputed = harvest.baselines().Computed;
  summary.BaselinesCached = harvest.baselines().Cached;
  summary.BaselinesStored = harvest.baselines().Stored;
  if (options.Hooks)
    summary.Adopted = options.Hooks->taken().value_or(0);
  if (llvm::Error e = journal.close())
    harvest.stop(llvm::toString(std::move(e)));
  summary.Interrupted = interruptRequested();
  summary.Stopped = harvest.stopReason();

  // The journal, compacted to the latest line of every module it names,
  // whatever this run's selection: it describes every log in OUT/logs.
  auto latest = readHarvestJournal(journalPath);
  if (!latest)
    return latest.takeError();
  std::vector<nlohmann::ordered_json> compacted;
  done.clear();
  for (HarvestJournalLine &line : latest->Latest) {
    compacted.push_back(nlohmann::ordered_json::parse(line.Text)); // as written (it parsed once)
    done[line.Record.Module] = std::move(line.Record);
  }
  for (const PlannedModule &module : *plan) {
    auto it = done.find(module.Name);
    if (it == done.end())
      continue;
    const std::string &status = it->second.Status;
    summary.Ok += status == "ok";
    summary.WithoutLog += status == "ok" && !it->second.LogWritten;
    summary.Failed += status == "failed";
    summary.TimedOut += status == "timeout";
  }
  if (steps.AfterCompiles)
    steps.AfterCompiles(PassOutcome{*corpus, *plan, done, harvest.baselines()}, summary);
  // A run that stopped on an unusable file system still says what it did:
  // the appended journal lines stay as they are if compaction fails, and
  // the summary goes to the log if it cannot be written.
  if (!summary.Interrupted)
    if (llvm::Error e = rewriteJournal(journalPath, journalOptions, compacted)) {
      if (!summary.Stopped)
        return e;
      log::warning("cannot compact the journal (it keeps its appended lines): " + llvm::toString(std::move(e)));
    }
  std::string summaryText = summary.toJson(options).dump(2) + "\n";
  if (llvm::Error e = writeFileAtomically(joinPath(options.OutputDir, "summary.json"), summaryText)) {
    if (!summary.Stopped)
      return e;
    log::error(llvm::toString(std::move(e)) + "; the summary:\n" + summaryText);
  }
  if (!summary.Interrupted && !summary.Stopped && !options.TFRecordPath.empty())
    if (llvm::Error e = writeDataset(options, *plan, done))
      return e;
  return summary;
}

} // namespace mlgo
