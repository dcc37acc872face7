#include "mlgo/harvest/HarvestMerge.h"
#include "mlgo/support/Version.h"

#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/log/LogDataset.h"
#include "mlgo/log/Problem.h"
#include "mlgo/log/TFRecord.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

namespace mlgo {
namespace {

using Json = nlohmann::ordered_json;

// A journal line as the shard wrote it (kept byte for byte) and parsed.
struct JournalLine {
  std::string Text;
  Json Value;
};

// The latest line per module of a JSON Lines journal, as the harvester's
// resume reads it: torn lines from a killed run are ignored.
std::map<std::string, JournalLine> readJournal(const std::string &path, const char *key) {
  std::map<std::string, JournalLine> latest;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return latest;
  llvm::SmallVector<llvm::StringRef, 0> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, false);
  for (llvm::StringRef text : lines) {
    try {
      Json j = Json::parse(text);
      if (j.is_object() && j.contains(key) && j[key].is_string()) {
        std::string name = j[key].get<std::string>();
        latest[name] = {text.str(), std::move(j)};
      }
    } catch (const nlohmann::json::exception &) {
    }
  }
  return latest;
}

// The options header line of a journal ({"options": {...}}, line 1), byte
// for byte, or "" when the journal has none.
std::string journalHeader(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return "";
  llvm::StringRef first = (*buffer)->getBuffer().split('\n').first;
  try {
    Json j = Json::parse(first);
    if (j.is_object() && j.size() == 1 && j.contains("options"))
      return first.str();
  } catch (const nlohmann::json::exception &) {
  }
  return "";
}

// A finished module whose journal line promises a log: ok, with decisions
// made over a stream (regalloc modules without function bodies have none).
bool promisesLog(const Json &j) {
  if (j.contains("log_written") && j["log_written"].is_boolean())
    return j["log_written"].get<bool>();
  return j.value("status", "") == "ok" && j.value("streams", 1) > 0 && j.value("decisions", 1) > 0;
}

struct Shard {
  unsigned Index = 0;
  std::string Dir;
  bool Exists = false;
  std::optional<Json> Summary;
  std::map<std::string, JournalLine> Journal;
  std::map<std::string, JournalLine> DefaultSizes;
  std::string JournalHeader, DefaultSizesHeader; // the options lines, as written
  std::vector<std::string> Absent;               // planned modules without a finished record
  std::set<std::string> LogMissing;              // of which: an ok journal line, but no log
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
  std::string summaryPath = joinPath(shard.Dir, "summary.json");
  if (auto buffer = llvm::MemoryBuffer::getFile(summaryPath)) {
    try {
      shard.Summary = Json::parse((*buffer)->getBuffer());
    } catch (const nlohmann::json::exception &e) {
      return llvm::createStringError("%s: not JSON: %s", summaryPath.c_str(), e.what());
    }
    std::string expected = std::to_string(shard.Index) + "/" + std::to_string(count);
    std::string recorded = shard.Summary->value("shard", "");
    if (recorded != expected)
      return llvm::createStringError("%s says shard %s, but it is merged as %s: give the shard directories in "
                                     "shard order, all N of them",
                                     summaryPath.c_str(), recorded.c_str(), shardName(shard, count).c_str());
  }
  std::string journalPath = joinPath(shard.Dir, "harvest.jsonl");
  shard.Journal = readJournal(journalPath, "module");
  shard.JournalHeader = journalHeader(journalPath);
  for (auto &[name, line] : shard.Journal)
    if (!position.count(name))
      return llvm::createStringError("%s: module '%s' is not in %s of this selection (other --modules_filter, "
                                     "--sampling_rate, --seed or corpus than the harvest's, or the shard "
                                     "directories are out of order)",
                                     journalPath.c_str(), name.c_str(), shardName(shard, count).c_str());
  shard.DefaultSizes = readJournal(joinPath(shard.Dir, "default_sizes.jsonl"), "module");
  shard.DefaultSizesHeader = journalHeader(joinPath(shard.Dir, "default_sizes.jsonl"));
  // Plan order, so error messages list modules as the harvest runs them.
  std::vector<std::pair<size_t, std::string>> ordered;
  for (auto &[name, p] : position)
    ordered.push_back({p, name});
  std::sort(ordered.begin(), ordered.end());
  for (auto &[p, name] : ordered) {
    auto it = shard.Journal.find(name);
    if (it == shard.Journal.end())
      shard.Absent.push_back(name);
    else if (promisesLog(it->second.Value) && !llvm::sys::fs::exists(harvestLogPath(shard.Dir, name))) {
      shard.Absent.push_back(name);
      shard.LogMissing.insert(name);
      shard.Journal.erase(it);
    }
  }
  return llvm::Error::success();
}

// What every shard must agree on; read from their summaries.
llvm::Expected<Json> commonSettings(const std::vector<Shard> &shards) {
  static const char *Keys[] = {"problem", "compiler", "mode", "policy"};
  std::optional<Json> settings;
  const Shard *first = nullptr;
  for (const Shard &shard : shards) {
    if (!shard.Summary)
      continue;
    Json mine = Json::object();
    for (const char *key : Keys)
      mine[key] = shard.Summary->value(key, Json());
    if (!settings) {
      settings = mine, first = &shard;
      continue;
    }
    for (const char *key : Keys)
      if (mine[key] != (*settings)[key])
        return llvm::createStringError("shards disagree: %s has %s %s, %s has %s", first->Dir.c_str(), key,
                                       (*settings)[key].dump().c_str(), shard.Dir.c_str(), mine[key].dump().c_str());
  }
  // Why the mode ran: the same probe on every shard; the first one's words.
  if (settings && first->Summary->contains("mode_reason"))
    (*settings)["mode_reason"] = (*first->Summary)["mode_reason"];
  if (!settings)
    return llvm::createStringError("no shard has a summary.json (harvest-logs writes it when a shard ends): "
                                   "nothing tells which problem and policy were harvested");
  if (!(*settings)["problem"].is_string() || !parseProblem((*settings)["problem"].get<std::string>()))
    return llvm::createStringError("%s/summary.json: unknown problem %s", first->Dir.c_str(),
                                   (*settings)["problem"].dump().c_str());
  return *settings;
}

// The shards' summaries combined as if one run had made them all: counts
// from the merged journal, timings from the shards (the longest shard's
// seconds, the largest RSS, the total CPU time).
// Confined only if every shard was: the lowest ABI, the first warning.
Json mergedConfinement(const std::vector<Shard> &shards) {
  bool active = true, any = false;
  int64_t abi = 0;
  std::string warning;
  for (const Shard &shard : shards) {
    if (!shard.Summary || !shard.Summary->contains("confinement") || !(*shard.Summary)["confinement"].is_object())
      continue;
    const Json &c = (*shard.Summary)["confinement"];
    bool shardActive = c.contains("active") && c["active"].is_boolean() && c["active"].get<bool>();
    int64_t shardAbi =
        c.contains("landlock_abi") && c["landlock_abi"].is_number_integer() ? c["landlock_abi"].get<int64_t>() : 0;
    abi = any ? std::min(abi, shardAbi) : shardAbi;
    active = active && shardActive;
    if (warning.empty() && c.contains("warning") && c["warning"].is_string())
      warning = c["warning"].get<std::string>();
    any = true;
  }
  if (!any)
    return {{"active", false}, {"landlock_abi", 0}, {"warning", "no shard summary records confinement"}};
  return {{"active", active}, {"landlock_abi", active ? abi : 0}, {"warning", warning}};
}

Json mergedSummary(const MergeOptions &o, const Json &settings, const std::vector<Shard> &shards, size_t planned,
                   const std::vector<const JournalLine *> &lines, const MergeResult &result) {
  size_t ok = 0, failed = 0, timedOut = 0, decisions = 0, withoutLog = 0;
  for (const JournalLine *line : lines) {
    std::string status = line->Value.value("status", "");
    ok += status == "ok", failed += status == "failed", timedOut += status == "timeout";
    withoutLog += status == "ok" && !line->Value.value("log_written", true);
    decisions += line->Value.value("decisions", size_t(0));
  }
  double seconds = 0, cpu = 0;
  int64_t rss = 0;
  for (const Shard &shard : shards)
    if (shard.Summary) {
      seconds = std::max(seconds, shard.Summary->value("seconds", 0.0));
      cpu += shard.Summary->value("harvester_cpu_seconds", 0.0);
      rss = std::max(rss, shard.Summary->value("harvester_peak_rss_kb", int64_t(0)));
    }
  Json j;
  j["mlgo_version"] = versionString();
  j["corpus"] = o.CorpusDir;
  for (const char *key : {"problem", "compiler", "mode", "mode_reason", "policy"})
    if (settings.contains(key))
      j[key] = settings[key];
  j["shard"] = "0/1";
  j["confinement"] = mergedConfinement(shards);
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

llvm::Error placeLog(const std::string &from, const std::string &to, bool hardLink) {
  if (llvm::Error e = ensureDirectory(dirName(to)))
    return e;
  std::error_code ec = hardLink ? llvm::sys::fs::create_hard_link(from, to) : llvm::sys::fs::copy_file(from, to);
  if (ec)
    return llvm::createStringError(ec, "cannot %s %s to %s: %s", hardLink ? "link" : "copy", from.c_str(), to.c_str(),
                                   ec.message().c_str());
  return llvm::Error::success();
}

// Puts the finished staging directory at `dir`, replacing an earlier merge.
llvm::Error replaceDirectory(const std::string &staging, const std::string &dir) {
  std::string old = dir + ".merge-old." + std::to_string(::getpid());
  bool existed = llvm::sys::fs::exists(dir);
  if (existed)
    if (std::error_code ec = llvm::sys::fs::rename(dir, old))
      return llvm::createStringError(ec, "cannot move the earlier %s aside: %s", dir.c_str(), ec.message().c_str());
  if (std::error_code ec = llvm::sys::fs::rename(staging, dir))
    return llvm::createStringError(ec, "cannot rename %s to %s: %s", staging.c_str(), dir.c_str(),
                                   ec.message().c_str());
  if (existed)
    llvm::sys::fs::remove_directories(old);
  return llvm::Error::success();
}

// The output directory is replaced as a whole, so it must not hold a shard,
// and an existing one must be empty or an earlier merge.
llvm::Error checkReplaceable(const std::string &outputDir, const std::vector<std::string> &shardDirs) {
  std::string out = absolutePath(outputDir);
  for (const std::string &shard : shardDirs)
    if (isWithin(absolutePath(shard), out))
      return llvm::createStringError("--output_dir %s holds the shard %s: merge into another directory",
                                     outputDir.c_str(), shard.c_str());
  std::error_code ec;
  llvm::sys::fs::directory_iterator it(out, ec);
  if (ec || it == llvm::sys::fs::directory_iterator())
    return llvm::Error::success(); // absent or empty
  auto summary = llvm::MemoryBuffer::getFile(joinPath(out, "summary.json"));
  bool earlierMerge = false;
  if (summary) {
    try {
      earlierMerge = Json::parse((*summary)->getBuffer()).contains("merge");
    } catch (const nlohmann::json::exception &) {
    }
  }
  if (!earlierMerge)
    return llvm::createStringError("--output_dir %s exists and is not an earlier merge-harvest output (no summary.json "
                                   "with a merge section): refusing to replace it",
                                   outputDir.c_str());
  return llvm::Error::success();
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

  // Everything checked: write into a staging directory, then rename it.
  std::string outputDir = normalizePath(o.OutputDir);
  std::string staging = outputDir + ".merge-tmp." + std::to_string(::getpid());
  llvm::sys::fs::remove_directories(staging);
  struct Cleanup {
    std::string Dir;
    ~Cleanup() {
      if (!Dir.empty())
        llvm::sys::fs::remove_directories(Dir);
    }
  } cleanup{staging};
  if (llvm::Error e = ensureDirectory(joinPath(staging, "logs")))
    return e;

  // Every shard harvested with the same options (the journal header says
  // which); the merged journal and cache carry that header, as one run's do.
  std::string journal, defaultSizes, header, sizesHeader;
  for (const Shard &shard : shards) {
    if (!shard.Exists)
      continue;
    if (header.empty())
      header = shard.JournalHeader;
    else if (!shard.JournalHeader.empty() && shard.JournalHeader != header)
      return llvm::createStringError("%s was harvested with other options than the shards before it: %s against %s",
                                     shardName(shard, count).c_str(), shard.JournalHeader.c_str(), header.c_str());
    if (sizesHeader.empty())
      sizesHeader = shard.DefaultSizesHeader;
  }
  if (!header.empty())
    journal = header + "\n";
  std::vector<const JournalLine *> lines;
  std::map<std::string, const JournalLine *> records;
  for (size_t p = 0; p < plan->size(); ++p) {
    const Shard &shard = shards[p % count];
    const std::string &name = (*plan)[p].Name;
    if (auto size = shard.DefaultSizes.find(name); size != shard.DefaultSizes.end())
      defaultSizes += size->second.Text + "\n";
    auto it = shard.Journal.find(name);
    if (it == shard.Journal.end())
      continue;
    journal += it->second.Text + "\n";
    lines.push_back(&it->second);
    records[name] = &it->second;
    std::string log = harvestLogPath(shard.Dir, name);
    if (!llvm::sys::fs::exists(log))
      continue;
    if (llvm::Error e = placeLog(log, harvestLogPath(staging, name), o.HardLink))
      return e;
    ++result.Logs;
  }
  result.Merged = lines.size();
  if (llvm::Error e = writeFileAtomically(joinPath(staging, "harvest.jsonl"), journal))
    return e;
  if (!defaultSizes.empty())
    if (llvm::Error e = writeFileAtomically(joinPath(staging, "default_sizes.jsonl"),
                                            (sizesHeader.empty() ? "" : sizesHeader + "\n") + defaultSizes))
      return e;
  Json summary = mergedSummary(o, *settings, shards, plan->size(), lines, result);
  if (llvm::Error e = writeFileAtomically(joinPath(staging, "summary.json"), summary.dump(2) + "\n"))
    return e;
  if (llvm::Error e = replaceDirectory(staging, outputDir))
    return e;
  cleanup.Dir.clear();
  // The dataset as harvest-logs --tfrecord writes it, streamed from the
  // merged logs now in place.
  if (!o.TFRecordPath.empty()) {
    std::map<std::string, const Json *> values;
    for (const auto &[name, line] : records)
      values.emplace(name, &line->Value);
    auto totals = writeTFRecordDataset(
        harvestDatasetInputs(*parseProblem((*settings)["problem"].get<std::string>()), outputDir, *plan, values),
        o.TFRecordPath);
    if (!totals)
      return totals.takeError();
  }
  return result;
}

} // namespace mlgo
