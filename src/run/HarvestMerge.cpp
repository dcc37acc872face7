#include "mlgo/run/HarvestMerge.h"

#include "MergeOutput.h"
#include "mlgo/support/Version.h"

#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/explore/ExploredShards.h"
#include "mlgo/explore/RolloutLogs.h"
#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/log/LogDataset.h"
#include "mlgo/log/Problem.h"
#include "mlgo/log/TFRecord.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mlgo {
namespace {

using Json = nlohmann::ordered_json;

struct Shard {
  unsigned Index = 0;
  std::string Dir;
  bool Exists = false;
  std::optional<HarvestSummaryFile> Summary;
  std::map<std::string, HarvestJournalLine> Journal; // the latest record per planned module
  std::optional<Json> Options;                       // the journal's header
  DefaultSizeCacheFile DefaultSizes;
  std::vector<std::string> Absent;  // planned modules without a finished record
  std::set<std::string> LogMissing; // of which: an ok journal line, but no log
  std::vector<std::string> Stale;   // logs its journal does not promise: not merged
};

std::string listAbsent(const Shard &shard, size_t limit = 20) {
  const std::vector<std::string> &names = shard.Absent;
  std::string text;
  for (size_t i = 0; i < names.size() && i < limit; ++i)
    text += (i ? ", " : "") + names[i] + (shard.LogMissing.count(names[i]) ? " (journal says ok, log missing)" : "");
  if (names.size() > limit)
    text += ", ... and " + std::to_string(names.size() - limit) + " more";
  return text;
}

std::string shardName(const Shard &shard, size_t count) {
  return "shard " + std::to_string(shard.Index) + "/" + std::to_string(count) + " (" + shard.Dir + ")";
}

// Loads one shard and checks that it holds only modules of its own shard.
llvm::Error loadShard(Shard &shard, size_t count, const std::vector<PlannedModule> &plan) {
  llvm::sys::fs::file_status status;
  shard.Exists = !llvm::sys::fs::status(shard.Dir, status) && llvm::sys::fs::is_directory(status);
  std::map<std::string, size_t> position;
  for (size_t p = shard.Index; p < plan.size(); p += count)
    position[plan[p].Name] = p;
  if (!shard.Exists) {
    for (auto &[name, p] : position)
      shard.Absent.push_back(name);
    return llvm::Error::success();
  }
  // One reader for shards and for harvest-logs' resume: a record with a
  // wrong-typed field is an error naming the file, line and field.
  auto read = readHarvestDirectory(shard.Dir);
  if (!read)
    return read.takeError();
  std::string summaryPath = joinPath(shard.Dir, "summary.json");
  shard.Summary = std::move(read->Summary);
  if (shard.Summary) {
    std::string expected = std::to_string(shard.Index) + "/" + std::to_string(count);
    if (shard.Summary->Shard != expected)
      return llvm::createStringError("%s says shard %s, but it is merged as %s: give the shard directories in "
                                     "shard order, all N of them",
                                     summaryPath.c_str(), shard.Summary->Shard.c_str(),
                                     shardName(shard, count).c_str());
  }
  std::string journalPath = joinPath(shard.Dir, "harvest.jsonl");
  shard.Options = read->Journal.Options;
  if (shard.Options && shard.Options->contains("shard") &&
      (*shard.Options)["shard"] != Json(std::to_string(shard.Index) + "/" + std::to_string(count)))
    return llvm::createStringError("%s: harvested as shard %s, but it is merged as %s: give the shard directories in "
                                   "shard order, all N of them",
                                   journalPath.c_str(), (*shard.Options)["shard"].dump().c_str(),
                                   shardName(shard, count).c_str());
  for (HarvestJournalLine &line : read->Journal.Latest) {
    if (!position.count(line.Record.Module))
      return llvm::createStringError("%s: module '%s' is not in %s of this selection (other --modules_filter, "
                                     "--sampling_rate, --seed or corpus than the harvest's, or the shard "
                                     "directories are out of order)",
                                     journalPath.c_str(), line.Record.Module.c_str(), shardName(shard, count).c_str());
    std::string name = line.Record.Module;
    shard.Journal.emplace(std::move(name), std::move(line));
  }
  if (read->DefaultSizesIgnored)
    log::warning("not merging the default-size cache of " + shardName(shard, count) + ": " +
                 *read->DefaultSizesIgnored);
  else
    shard.DefaultSizes = std::move(read->DefaultSizes);
  // Plan order, so error messages list modules as the harvest runs them.
  std::vector<std::pair<size_t, std::string>> ordered;
  for (auto &[name, p] : position)
    ordered.push_back({p, name});
  std::sort(ordered.begin(), ordered.end());
  for (auto &[p, name] : ordered) {
    auto it = shard.Journal.find(name);
    if (it == shard.Journal.end()) {
      shard.Absent.push_back(name);
      continue;
    }
    // Not through a link planted in the shard's logs/ (sub/m0 under logs/sub).
    auto present = existsBeneath(shard.Dir, harvestLogName(name));
    if (!present)
      return llvm::createStringError("%s: refusing to merge it: %s", shardName(shard, count).c_str(),
                                     llvm::toString(present.takeError()).c_str());
    if (it->second.Record.hasLog() && !*present) {
      shard.Absent.push_back(name);
      shard.LogMissing.insert(name);
      shard.Journal.erase(it);
    } else if (!it->second.Record.hasLog() && *present)
      shard.Stale.push_back(name);
  }
  if (!shard.Stale.empty()) {
    std::string names;
    for (size_t i = 0; i < shard.Stale.size() && i < 20; ++i)
      names += (i ? ", " : "") + shard.Stale[i];
    log::warning(shardName(shard, count) + ": not merging " + std::to_string(shard.Stale.size()) +
                 " log(s) that its journal does not describe as written (the module failed or has no decisions; "
                 "an earlier version left the log): " +
                 names + (shard.Stale.size() > 20 ? ", ..." : ""));
  }
  return llvm::Error::success();
}

// What every shard must agree on; read from their summaries.
// The log format a mode writes: the plugin writes interactive mode's log.
const char *logFormat(const std::string &mode) { return mode == "development" ? "development" : "interactive"; }

llvm::Expected<Json> commonSettings(const std::vector<Shard> &shards) {
  std::optional<Json> settings;
  const Shard *first = nullptr;
  std::string modes;
  for (const Shard &shard : shards) {
    if (!shard.Summary)
      continue;
    const HarvestSummaryFile &s = *shard.Summary;
    Json mine = {
        {"problem", s.Problem}, {"compiler", s.Compiler}, {"log_format", logFormat(s.Mode)}, {"policy", s.Policy}};
    if (!settings) {
      settings = mine, first = &shard;
      (*settings)["mode"] = s.Mode;
      (*settings)["mode_reason"] = s.ModeReason; // the same probe on every shard: the first one's words
      continue;
    }
    for (const auto &[key, value] : mine.items())
      if (value != (*settings)[key])
        return llvm::createStringError("shards disagree: %s has %s %s, %s has %s", first->Dir.c_str(), key.c_str(),
                                       (*settings)[key].dump().c_str(), shard.Dir.c_str(), value.dump().c_str());
    // Plugin and interactive shards write the same logs (auto's probe may
    // decide differently on one node); the summary says so.
    if (s.Mode != (*settings)["mode"].get<std::string>())
      modes += "; " + shard.Dir + " ran " + s.Mode + " mode (" + s.ModeReason + ")";
  }
  if (!settings)
    return llvm::createStringError("no shard has a summary.json (harvest-logs writes it when a shard ends): "
                                   "nothing tells which problem and policy were harvested");
  if (!modes.empty())
    (*settings)["mode_reason"] = (*settings)["mode_reason"].get<std::string>() + modes;
  if (!parseProblem((*settings)["problem"].get<std::string>()))
    return llvm::createStringError("%s/summary.json: unknown problem %s", first->Dir.c_str(),
                                   (*settings)["problem"].dump().c_str());
  return *settings;
}

// The shards' summaries combined as if one run had made them all: counts
// from the merged journal, timings from the shards (the longest shard's
// seconds, the largest RSS, the total CPU time).
// Confined only if every shard was: the lowest ABI, the first warning; what
// any shard's compiles could read and execute (the union), when every shard
// says.
Json mergedConfinement(const std::vector<Shard> &shards) {
  bool active = true, any = false, listed = true;
  size_t abi = 0;
  std::string warning;
  std::vector<std::string> readable, executable;
  auto addAll = [](std::vector<std::string> &to, const std::vector<std::string> &from) {
    for (const std::string &path : from)
      if (std::find(to.begin(), to.end(), path) == to.end())
        to.push_back(path);
  };
  for (const Shard &shard : shards) {
    if (!shard.Summary || !shard.Summary->Confined)
      continue;
    const HarvestSummaryFile::Confinement &c = *shard.Summary->Confined;
    abi = any ? std::min(abi, c.LandlockAbi) : c.LandlockAbi;
    active = active && c.Active;
    if (warning.empty())
      warning = c.Warning;
    listed = listed && c.Readable && c.Executable;
    if (listed) {
      addAll(readable, *c.Readable);
      addAll(executable, *c.Executable);
    }
    any = true;
  }
  if (!any)
    return {{"active", false}, {"landlock_abi", 0}, {"warning", "no shard summary records confinement"}};
  Json merged = {{"active", active}, {"landlock_abi", active ? abi : 0}, {"warning", warning}};
  if (active && listed) {
    merged["readable"] = readable;
    merged["executable"] = executable;
  }
  return merged;
}

// Used only if every shard used it (the first shard's reason, or the first
// that did not, with its directory); the largest peak RSS, the starts added.
Json mergedCompileServer(const std::vector<Shard> &shards) {
  bool used = true;
  std::string reason;
  size_t rss = 0, starts = 0;
  for (const Shard &shard : shards) {
    if (!shard.Summary || !shard.Summary->CompileServer) {
      if (used)
        reason = shard.Dir + " records no compile_server";
      used = false;
      continue;
    }
    const HarvestSummaryFile::CompileServerUse &c = *shard.Summary->CompileServer;
    if (used && !c.Used)
      reason = shard.Dir + ": " + c.Reason;
    else if (used && reason.empty())
      reason = c.Reason;
    used = used && c.Used;
    rss = std::max(rss, c.PeakRssKb);
    starts += c.Starts;
  }
  return {{"used", used}, {"reason", reason}, {"peak_rss_kb", rss}, {"starts", starts}};
}

Json mergedSummary(const MergeOptions &o, const Json &settings, const std::vector<Shard> &shards, size_t planned,
                   const std::vector<const HarvestRecord *> &records, const MergeResult &result) {
  size_t ok = 0, failed = 0, timedOut = 0, decisions = 0, withoutLog = 0;
  for (const HarvestRecord *r : records) {
    ok += r->Status == "ok", failed += r->Status == "failed", timedOut += r->Status == "timeout";
    withoutLog += r->ok() && !r->LogWritten;
    decisions += r->Decisions;
  }
  double seconds = 0, cpu = 0;
  int64_t rss = 0;
  for (const Shard &shard : shards)
    if (shard.Summary) {
      seconds = std::max(seconds, shard.Summary->Seconds);
      cpu += shard.Summary->CpuSeconds;
      rss = std::max(rss, shard.Summary->PeakRssKb);
    }
  Json j;
  j["mlgo_version"] = versionString();
  j["corpus"] = o.CorpusDir;
  for (const char *key : {"problem", "compiler", "mode", "mode_reason", "policy"})
    if (settings.contains(key))
      j[key] = settings[key];
  j["shard"] = "0/1";
  j["confinement"] = mergedConfinement(shards);
  j["compile_server"] = mergedCompileServer(shards);
  // What the shards compiled and took from caches, added up.
  size_t computed = 0, cachedBaselines = 0, stored = 0;
  for (const Shard &shard : shards)
    if (shard.Summary && shard.Summary->Value.is_object() && shard.Summary->Value.contains("baselines")) {
      const Json &b = shard.Summary->Value["baselines"];
      if (b.is_object() && b.value("computed", Json()).is_number_unsigned() &&
          b.value("cached", Json()).is_number_unsigned())
        computed += b["computed"].get<size_t>(), cachedBaselines += b["cached"].get<size_t>();
      if (b.is_object() && b.value("stored", Json()).is_number_unsigned())
        stored += b["stored"].get<size_t>();
    }
  j["baselines"] = {{"computed", computed}, {"cached", cachedBaselines}};
  if (stored)
    j["baselines"]["stored"] = stored;
  j["interrupted"] = false;
  j["modules"] = {{"planned", planned},  {"ok", ok},          {"failed", failed},
                  {"timeout", timedOut}, {"skipped_done", 0}, {"without_log", withoutLog}};
  j["decisions"] = decisions;
  j["seconds"] = seconds;
  j["decisions_per_second"] = seconds > 0 ? decisions / seconds : 0.0;
  j["harvester_peak_rss_kb"] = rss;
  j["harvester_cpu_seconds"] = cpu;
  Json merge;
  merge["shards"] = Json::array();
  for (const Shard &shard : shards)
    merge["shards"].push_back(shard.Dir);
  merge["complete"] = result.MissingModules.empty();
  merge["missing_shards"] = result.MissingShards;
  merge["missing_modules"] = result.MissingModules;
  j["merge"] = std::move(merge);
  return j;
}

// An explored merge's own files in the staging directory: explore.jsonl,
// ml-compiler-opt's profiles and, with --tfrecord, its trajectories (from the
// staged kept logs, so that the summary can say what was written). Returns
// the summary's explore. The merged journal must describe every kept log.
llvm::Expected<Json> writeMergedExploration(MergedExploration &merged,
                                            const std::map<std::string, const HarvestRecord *> &records,
                                            const std::string &staging, const std::string &outputDir,
                                            const std::string &tfrecord) {
  for (ImitationModule &m : merged.Modules) {
    auto record = records.find(m.Name);
    if (record == records.end() || record->second->NativeSize != std::optional<uint64_t>(m.KeptSize))
      return llvm::createStringError("explore.jsonl keeps a trajectory of '%s' of %llu bytes that its shard's "
                                     "journal does not describe: the shard is not one harvest-logs --explore wrote",
                                     m.Name.c_str(), static_cast<unsigned long long>(m.KeptSize));
    m.KeptLog = harvestLogPath(staging, m.Name);
  }
  if (llvm::Error e = writeFileAtomically(joinPath(staging, "explore.jsonl"), merged.Table))
    return std::move(e);
  if (llvm::Error e = writeImitationProfiles(merged.Modules, joinPath(staging, "profile")))
    return std::move(e);
  Json explore = merged.Summary;
  explore["profiles"] = joinPath(outputDir, "profile");
  if (!tfrecord.empty()) {
    auto totals = writeImitationTrajectories(merged.Modules, tfrecord);
    if (!totals)
      return totals.takeError();
    explore["trajectory_tfrecord"] = {{"path", tfrecord},
                                      {"records", totals->Records},
                                      {"steps", totals->Steps},
                                      {"without_decisions", totals->SkippedWithoutDecisions}};
  }
  return explore;
}

} // namespace

llvm::Expected<MergeResult> mergeHarvest(const MergeOptions &o) {
  if (o.ShardDirs.empty())
    return llvm::createStringError("no shard directories to merge");
  auto corpus = readCorpusDescription(o.CorpusDir);
  if (!corpus)
    return corpus.takeError();
  ModuleSelection whole = o.Selection;
  whole.ShardIndex = 0, whole.ShardCount = 1;
  auto plan = planModules(*corpus, o.CorpusDir, whole);
  if (!plan)
    return plan.takeError();

  size_t count = o.ShardDirs.size();
  std::vector<Shard> shards(count);
  for (size_t i = 0; i < count; ++i) {
    shards[i].Index = static_cast<unsigned>(i);
    shards[i].Dir = o.ShardDirs[i];
    if (llvm::Error e = loadShard(shards[i], count, *plan))
      return e;
  }
  auto settings = commonSettings(shards);
  if (!settings)
    return settings.takeError();

  if (llvm::Error e = checkReplaceable(o.OutputDir, o.ShardDirs))
    return e;
  // Explored shards (--explore): their trajectory tables, checked, joined.
  std::vector<ExploredShard> exploredShards;
  for (const Shard &shard : shards) {
    if (!shard.Exists)
      continue;
    ExploredShard &e = exploredShards.emplace_back();
    e.Dir = shard.Dir, e.Name = shardName(shard, count);
    e.Summary = shard.Summary ? &shard.Summary->Value : nullptr;
    for (const auto &[name, line] : shard.Journal)
      e.Modules.insert(name);
  }
  auto exploration = mergeExploredShards(exploredShards);
  if (!exploration)
    return exploration.takeError();

  MergeResult result;
  result.Planned = plan->size();
  std::string incomplete;
  for (const Shard &shard : shards) {
    if (!shard.Exists)
      result.MissingShards.push_back(shard.Index);
    result.MissingModules.insert(result.MissingModules.end(), shard.Absent.begin(), shard.Absent.end());
    if (shard.Absent.empty())
      continue;
    size_t planned = 0;
    for (size_t p = shard.Index; p < plan->size(); p += count)
      ++planned;
    incomplete += "\n  " + shardName(shard, count) + ": " + (shard.Exists ? "" : "the directory does not exist; ") +
                  std::to_string(shard.Absent.size()) + " of " + std::to_string(planned) +
                  " modules absent: " + listAbsent(shard);
  }
  if (!incomplete.empty()) {
    if (!o.AllowPartial)
      return llvm::createStringError("cannot merge: %zu of %zu modules are not finished in their shard "
                                     "(rerun those shards, or --allow_partial merges the rest):%s",
                                     result.MissingModules.size(), plan->size(), incomplete.c_str());
    log::warning("merging without " + std::to_string(result.MissingModules.size()) + " modules:" + incomplete);
  }

  // Every shard harvested with the same options (the journal header says
  // which, besides its own shard); the merged journal carries that header
  // as a one-machine run's (shard 0/1), the cache its shards' header.
  std::optional<Json> options;
  const Shard *optionsFrom = nullptr;
  std::string sizesHeader;
  for (const Shard &shard : shards) {
    if (!shard.Exists || !shard.Options)
      continue;
    if (!options)
      options = shard.Options, optionsFrom = &shard;
    else if (withoutShard(*shard.Options) != withoutShard(*options))
      return llvm::createStringError("%s was harvested with other options than %s: %s against %s",
                                     shardName(shard, count).c_str(), shardName(*optionsFrom, count).c_str(),
                                     withoutShard(*shard.Options).dump().c_str(),
                                     withoutShard(*options).dump().c_str());
    if (sizesHeader.empty() && shard.DefaultSizes.Options) {
      Json sizesOptions = *shard.DefaultSizes.Options; // the merged directory's, as for the journal
      if (sizesOptions.is_object() && sizesOptions.contains("shard"))
        sizesOptions["shard"] = "0/1";
      sizesHeader = jsonLine({{"options", sizesOptions}});
    }
  }
  std::string journal;
  if (options) {
    if (options->contains("shard"))
      (*options)["shard"] = "0/1";
    journal = jsonLine({{"options", *options}});
  }

  // Everything checked: write into a staging directory, then rename it.
  std::string outputDir = normalizePath(o.OutputDir);
  if (llvm::Error e = lockOutputAndCleanStale(outputDir))
    return e;
  std::string staging = outputDir + ".merge-tmp." + std::to_string(::getpid());
  struct Cleanup {
    std::string Dir;
    ~Cleanup() {
      if (!Dir.empty())
        llvm::sys::fs::remove_directories(Dir);
    }
  } cleanup{staging};
  if (llvm::Error e = ensureDirectory(joinPath(staging, "logs")))
    return e;
  auto interrupted = [] {
    return llvm::createStringError(std::make_error_code(std::errc::interrupted),
                                   "interrupted: nothing was written. Run the same command again to merge");
  };

  // Every shard's header promises a sites file beside each log, or none does.
  bool sites = options && options->is_object() && options->value("decision_sites", false);
  std::string defaultSizes;
  std::vector<const HarvestRecord *> lines;
  std::map<std::string, const HarvestRecord *> records;
  std::set<std::string> directories = {staging, joinPath(staging, "logs")};
  for (size_t p = 0; p < plan->size(); ++p) {
    if (interruptRequested())
      return interrupted();
    const Shard &shard = shards[p % count];
    const std::string &name = (*plan)[p].Name;
    if (auto size = shard.DefaultSizes.Sizes.find(name); size != shard.DefaultSizes.Sizes.end())
      defaultSizes += size->second.second + "\n";
    auto it = shard.Journal.find(name);
    if (it == shard.Journal.end())
      continue;
    journal += it->second.Text + "\n";
    lines.push_back(&it->second.Record);
    records[name] = &it->second.Record;
    // Only the logs the journal promises (an ok record with log_written):
    // a failed module's leftover log is not the module's.
    if (!it->second.Record.hasLog())
      continue;
    std::string to = harvestLogPath(staging, name);
    if (llvm::Error e = placeLog(shard.Dir, harvestLogName(name), to, o.HardLink))
      return e;
    if (sites)
      if (llvm::Error e = placeLog(shard.Dir, harvestSitesName(name), harvestSitesPath(staging, name), o.HardLink))
        return e;
    for (std::string dir = parentOf(to); dir.size() > staging.size() && directories.insert(dir).second;)
      dir = parentOf(dir);
    // An explored shard's rollouts beside its base's features (RolloutLogs.h).
    if (*exploration) {
      auto rollouts = existsBeneath(shard.Dir, rolloutLogName(name));
      if (!rollouts)
        return rollouts.takeError();
      if (*rollouts) {
        std::string rolloutTo = joinPath(staging, rolloutLogName(name));
        if (llvm::Error e = placeLog(shard.Dir, rolloutLogName(name), rolloutTo, o.HardLink))
          return e;
        if (sites)
          if (llvm::Error e =
                  placeLog(shard.Dir, rolloutSitesName(name), joinPath(staging, rolloutSitesName(name)), o.HardLink))
            return e;
        for (std::string dir = parentOf(rolloutTo); dir.size() > staging.size() && directories.insert(dir).second;)
          dir = parentOf(dir);
      }
    }
    ++result.Logs;
  }
  result.Merged = lines.size();
  if (llvm::Error e = writeFileAtomically(joinPath(staging, "harvest.jsonl"), journal))
    return e;
  std::optional<Json> explore;
  if (*exploration) {
    auto written = writeMergedExploration(**exploration, records, staging, outputDir, o.TFRecordPath);
    if (!written)
      return written.takeError();
    explore = std::move(*written);
  }
  if (!defaultSizes.empty())
    if (llvm::Error e = writeFileAtomically(joinPath(staging, "default_sizes.jsonl"), sizesHeader + defaultSizes))
      return e;
  Json summary = mergedSummary(o, *settings, shards, plan->size(), lines, result);
  if (sites)
    summary["decision_sites"] = {{"written", true}, {"reason", ""}};
  if (explore)
    summary["explore"] = std::move(*explore);
  if (llvm::Error e = writeFileAtomically(joinPath(staging, "summary.json"), summary.dump(2) + "\n"))
    return e;
  // Every name made in the staging tree is durable before the rename that
  // publishes it (the files themselves were synced as they were written).
  for (auto dir = directories.rbegin(); dir != directories.rend(); ++dir)
    if (llvm::Error e = syncDirectory(*dir))
      return e;
  if (interruptRequested())
    return interrupted();
  if (llvm::Error e = replaceDirectory(staging, outputDir))
    return e;
  cleanup.Dir.clear();
  // The dataset as harvest-logs --tfrecord writes it, streamed from the
  // merged logs now in place.
  if (!o.TFRecordPath.empty() && !explore) {
    auto totals = writeTFRecordDataset(
        harvestDatasetInputs(*parseProblem((*settings)["problem"].get<std::string>()), outputDir, *plan, records),
        o.TFRecordPath);
    if (!totals)
      return totals.takeError();
  }
  return result;
}

} // namespace mlgo
