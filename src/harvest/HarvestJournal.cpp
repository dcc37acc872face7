#include "mlgo/harvest/HarvestJournal.h"

#include "mlgo/support/BeneathPath.h"

#include "mlgo/corpus/ModuleNaming.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/MemoryBuffer.h"

#include <set>

namespace mlgo {
namespace {

using Json = nlohmann::ordered_json;

const char *typeName(const Json &value) {
  if (value.is_number_unsigned())
    return "a non-negative integer";
  if (value.is_number_integer())
    return "a negative integer";
  if (value.is_number_float())
    return "a fractional number";
  return value.type_name();
}

// Reads the named fields of one JSON object, each with its type checked; the
// first mismatch is kept and reported as "WHERE: field X is not a T (it is U)".
class Fields {
public:
  Fields(const Json &object, llvm::StringRef where) : Object(object), Where(where.str()) {}

  const Json *find(const char *name, bool required) {
    Seen.insert(name);
    auto it = Object.find(name);
    if (it == Object.end()) {
      if (required)
        fail(std::string("field '") + name + "' is missing");
      return nullptr;
    }
    return &*it;
  }
  void string(const char *name, std::string &out, bool required = true) {
    if (const Json *v = find(name, required)) {
      if (v->is_string())
        out = v->get<std::string>();
      else
        wrongType(name, "a string", *v);
    }
  }
  void boolean(const char *name, bool &out, bool required = true) {
    if (const Json *v = find(name, required)) {
      if (v->is_boolean())
        out = v->get<bool>();
      else
        wrongType(name, "a boolean", *v);
    }
  }
  void strings(const char *name, std::optional<std::vector<std::string>> &out, bool required = true) {
    if (const Json *v = find(name, required)) {
      bool ok = v->is_array();
      for (const Json &e : ok ? *v : Json::array())
        ok = ok && e.is_string();
      if (ok)
        out = v->get<std::vector<std::string>>();
      else
        wrongType(name, "a list of strings", *v);
    }
  }
  void count(const char *name, size_t &out, bool required = true) {
    if (const Json *v = find(name, required)) {
      if (v->is_number_unsigned())
        out = v->get<size_t>();
      else
        wrongType(name, "a non-negative integer", *v);
    }
  }
  void optionalCount(const char *name, std::optional<uint64_t> &out, bool required = true) {
    if (const Json *v = find(name, required)) {
      if (v->is_number_unsigned())
        out = v->get<uint64_t>();
      else if (!v->is_null())
        wrongType(name, "a non-negative integer or null", *v);
    }
  }
  void number(const char *name, double &out, bool required = true, bool nonNegative = false) {
    if (const Json *v = find(name, required)) {
      if (v->is_number() && (!nonNegative || v->get<double>() >= 0))
        out = v->get<double>();
      else
        wrongType(name, nonNegative ? "a non-negative number" : "a number", *v);
    }
  }
  void optionalNumber(const char *name, std::optional<double> &out, bool required = true, bool nullable = true) {
    if (const Json *v = find(name, required)) {
      if (v->is_number())
        out = v->get<double>();
      else if (!nullable || !v->is_null())
        wrongType(name, nullable ? "a number or null" : "a number", *v);
    }
  }
  /// Fields this reader does not know (a record from another version, or forged).
  void noOthers() {
    for (const auto &[name, value] : Object.items())
      if (!Seen.count(name)) {
        fail("field '" + name + "' is not a field of this file");
        return;
      }
  }
  bool failed() const { return !Error.empty(); }
  void fail(const std::string &what) {
    if (Error.empty())
      Error = Where + ": " + what;
  }
  llvm::Error error() const {
    return Error.empty()
               ? llvm::Error::success()
               : llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "%s", Error.c_str());
  }

private:
  void wrongType(const char *name, const char *expected, const Json &value) {
    fail(std::string("field '") + name + "' is not " + expected + " (it is " + typeName(value) + ")");
  }
  const Json &Object;
  std::string Where, Error;
  std::set<std::string> Seen;
};

} // namespace

Json HarvestRecord::toJson() const {
  Json j;
  j["module"] = Module;
  j["status"] = Status;
  j["reason"] = Reason;
  j["detail"] = Detail;
  j["exit_status"] = ExitStatus;
  j["stderr_tail"] = StderrTail;
  j["seconds"] = Seconds;
  j["decisions"] = Decisions;
  j["streams"] = Streams;
  j["log_written"] = LogWritten;
  j["native_size"] = NativeSize ? Json(*NativeSize) : Json();
  j["default_size"] = DefaultSize ? Json(*DefaultSize) : Json();
  j["reward"] = Reward ? Json(*Reward) : Json();
  if (RegallocScore)
    j["regalloc_score"] = *RegallocScore;
  return j;
}

llvm::Expected<HarvestRecord> harvestRecordFromJson(const Json &value, llvm::StringRef where) {
  if (!value.is_object())
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "%s: not a JSON object",
                                   where.str().c_str());
  HarvestRecord r;
  Fields f(value, where);
  f.string("module", r.Module);
  f.string("status", r.Status);
  f.string("reason", r.Reason);
  f.string("detail", r.Detail);
  f.string("exit_status", r.ExitStatus);
  f.string("stderr_tail", r.StderrTail);
  f.number("seconds", r.Seconds, true, /*nonNegative=*/true);
  f.count("decisions", r.Decisions);
  f.count("streams", r.Streams);
  f.boolean("log_written", r.LogWritten);
  f.optionalCount("native_size", r.NativeSize);
  f.optionalCount("default_size", r.DefaultSize);
  f.optionalNumber("reward", r.Reward);
  f.optionalNumber("regalloc_score", r.RegallocScore, /*required=*/false, /*nullable=*/false);
  f.noOthers();
  if (llvm::Error e = f.error())
    return std::move(e);
  if (r.Status != "ok" && r.Status != "failed" && r.Status != "timeout")
    f.fail("field 'status' is \"" + r.Status + "\", not ok, failed or timeout");
  else if (r.LogWritten && !r.ok())
    f.fail("field 'log_written' is true for a module whose status is " + r.Status + " (only ok modules have logs)");
  else if (llvm::Error e = checkModuleName(r.Module))
    f.fail("field 'module': " + llvm::toString(std::move(e)));
  if (llvm::Error e = f.error())
    return std::move(e);
  return r;
}

llvm::Expected<HarvestJournal> readHarvestJournal(llvm::StringRef path) {
  auto contents = readJournalFile(path);
  if (!contents)
    return contents.takeError();
  HarvestJournal journal;
  journal.Options = std::move(contents->Options);
  journal.TornTail = contents->TornTail;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < contents->Records.size(); ++i) {
    std::string where = path.str() + " line " + std::to_string(contents->RecordLineNumbers[i]);
    if (i == 0 && contents->RecordLineNumbers[i] == 1 && contents->Records[i].contains("options"))
      return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                     "%s: the options header is not {\"options\": {...}}", where.c_str());
    auto record = harvestRecordFromJson(contents->Records[i], where);
    if (!record)
      return record.takeError();
    HarvestJournalLine line{std::move(*record), std::move(contents->RecordTexts[i])};
    auto [slot, isNew] = index.emplace(line.Record.Module, journal.Latest.size());
    if (isNew)
      journal.Latest.push_back(std::move(line));
    else
      journal.Latest[slot->second] = std::move(line);
  }
  return journal;
}

llvm::Expected<std::optional<HarvestSummaryFile>> readHarvestSummary(llvm::StringRef path) {
  auto buffer = readOwnFile(path); // never through a link at its name
  if (!buffer) {
    llvm::Error error = buffer.takeError();
    if (consumeIfMissing(error))
      return std::nullopt;
    return llvm::createStringError("cannot read %s: %s", path.str().c_str(), llvm::toString(std::move(error)).c_str());
  }
  HarvestSummaryFile summary;
  try {
    summary.Value = Json::parse((*buffer)->getBuffer());
  } catch (const nlohmann::json::exception &e) {
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "%s: not JSON: %s",
                                   path.str().c_str(), e.what());
  }
  if (!summary.Value.is_object())
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "%s: not a JSON object",
                                   path.str().c_str());
  // Only what the consumers use is checked; the rest is informational.
  Fields f(summary.Value, path);
  f.string("shard", summary.Shard);
  f.string("problem", summary.Problem);
  f.string("compiler", summary.Compiler);
  f.string("mode", summary.Mode);
  f.string("mode_reason", summary.ModeReason, /*required=*/false);
  f.string("policy", summary.Policy);
  f.number("seconds", summary.Seconds, false, true);
  f.number("harvester_cpu_seconds", summary.CpuSeconds, false, true);
  size_t rss = 0;
  f.count("harvester_peak_rss_kb", rss, false);
  summary.PeakRssKb = static_cast<int64_t>(std::min<size_t>(rss, INT64_MAX));
  if (const Json *confinement = f.find("confinement", false)) {
    if (!confinement->is_object()) {
      f.fail("field 'confinement' is not an object");
    } else {
      HarvestSummaryFile::Confinement c;
      Fields cf(*confinement, path.str() + ": confinement");
      cf.boolean("active", c.Active);
      cf.count("landlock_abi", c.LandlockAbi);
      cf.string("warning", c.Warning, /*required=*/false);
      cf.strings("readable", c.Readable, /*required=*/false);
      cf.strings("executable", c.Executable, /*required=*/false);
      if (llvm::Error e = cf.error())
        return std::move(e);
      summary.Confined = std::move(c);
    }
  }
  if (const Json *server = f.find("compile_server", false)) {
    if (!server->is_object()) {
      f.fail("field 'compile_server' is not an object");
    } else {
      HarvestSummaryFile::CompileServerUse use;
      Fields sf(*server, path.str() + ": compile_server");
      sf.boolean("used", use.Used);
      sf.string("reason", use.Reason);
      sf.count("peak_rss_kb", use.PeakRssKb);
      sf.count("starts", use.Starts);
      if (llvm::Error e = sf.error())
        return std::move(e);
      summary.CompileServer = std::move(use);
    }
  }
  if (const Json *merge = f.find("merge", false)) {
    summary.Merge = true;
    if (!merge->is_object())
      f.fail("field 'merge' is not an object");
  }
  if (llvm::Error e = f.error())
    return std::move(e);
  return summary;
}

llvm::Expected<DefaultSizeCacheFile> readDefaultSizeCache(llvm::StringRef path) {
  auto contents = readJournalFile(path);
  if (!contents)
    return contents.takeError();
  DefaultSizeCacheFile cache;
  cache.Options = std::move(contents->Options);
  for (size_t i = 0; i < contents->Records.size(); ++i) {
    std::string where = path.str() + " line " + std::to_string(contents->RecordLineNumbers[i]);
    Fields f(contents->Records[i], where);
    std::string module;
    size_t size = 0;
    f.string("module", module);
    f.count("native_size", size);
    f.noOthers();
    if (!f.failed())
      if (llvm::Error e = checkModuleName(module))
        f.fail("field 'module': " + llvm::toString(std::move(e)));
    if (llvm::Error e = f.error())
      return std::move(e);
    cache.Sizes[module] = {size, std::move(contents->RecordTexts[i])};
  }
  return cache;
}

llvm::Error checkNoUnfinishedCommit(llvm::StringRef dir) {
  auto pending = existsBeneath(dir, "explore/commit");
  if (!pending)
    return pending.takeError();
  if (*pending)
    return llvm::createStringError("%s holds an exploration killed while it installed its result (%s/explore/commit): "
                                   "its logs and journal disagree until the same harvest-logs command is run again "
                                   "to finish it",
                                   dir.str().c_str(), dir.str().c_str());
  return llvm::Error::success();
}

llvm::Expected<HarvestDirectory> readHarvestDirectory(llvm::StringRef dir) {
  if (llvm::Error e = checkNoUnfinishedCommit(dir))
    return std::move(e);
  HarvestDirectory shard;
  auto journal = readHarvestJournal(joinPath(dir, "harvest.jsonl"));
  if (!journal)
    return journal.takeError();
  shard.Journal = std::move(*journal);
  auto summary = readHarvestSummary(joinPath(dir, "summary.json"));
  if (!summary)
    return summary.takeError();
  shard.Summary = std::move(*summary);
  auto cache = readDefaultSizeCache(joinPath(dir, "default_sizes.jsonl"));
  if (cache)
    shard.DefaultSizes = std::move(*cache);
  else
    shard.DefaultSizesIgnored = llvm::toString(cache.takeError());
  return shard;
}

Json withoutShard(const Json &options) {
  Json copy = options;
  if (copy.is_object())
    copy.erase("shard");
  return copy;
}

} // namespace mlgo
