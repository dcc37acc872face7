// A harvest directory's records as every consumer reads them: the journal
// (OUT/harvest.jsonl), the summary (OUT/summary.json) and the default-size
// cache (OUT/default_sizes.jsonl). One reader and validator serves
// harvest-logs' resume, merge-harvest's shards and the --tfrecord dataset,
// so they accept and refuse the same directories. A directory is data from
// someone else: a record with a missing or wrong-typed field, or a module
// name that would leave the directory, is an error naming the file, the line
// and the field, never an exception or a silent skip.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// One journal record: a module's outcome (harvest_journal.schema.json).
struct HarvestRecord {
  std::string Module, Status = "failed", Reason, Detail, ExitStatus, StderrTail;
  double Seconds = 0;
  size_t Decisions = 0, Streams = 0;
  /// logs/<module>.log was written; an ok module with no decision has none,
  /// and a failed module never has one.
  bool LogWritten = false;
  std::optional<uint64_t> NativeSize, DefaultSize;
  std::optional<double> Reward, RegallocScore;

  bool ok() const { return Status == "ok"; }
  /// The record promises logs/<module>.log: the only logs resume keeps and
  /// the merge and the dataset take.
  bool hasLog() const { return ok() && LogWritten; }
  nlohmann::ordered_json toJson() const;
};

/// Checks every field of one parsed journal line; `where` ("FILE line N")
/// begins the error, which names the field and what it should be.
llvm::Expected<HarvestRecord> harvestRecordFromJson(const nlohmann::ordered_json &value, llvm::StringRef where);

struct HarvestJournalLine {
  HarvestRecord Record;
  std::string Text; // the line as written, without '\n'
};

struct HarvestJournal {
  std::optional<nlohmann::ordered_json> Options; // the header's options
  /// The latest record of each module, in order of first appearance.
  std::vector<HarvestJournalLine> Latest;
  bool TornTail = false; // a final line without '\n' (a killed run) was skipped
};

/// Reads and validates a journal; a missing file is an empty journal.
llvm::Expected<HarvestJournal> readHarvestJournal(llvm::StringRef path);

/// The summary fields a consumer relies on (harvest_summary.schema.json).
struct HarvestSummaryFile {
  nlohmann::ordered_json Value;
  std::string Shard, Problem, Compiler, Mode, ModeReason, Policy;
  double Seconds = 0, CpuSeconds = 0;
  int64_t PeakRssKb = 0;
  bool Merge = false; // written by merge-harvest
  /// Whether the run's compiles were confined by Landlock (absent: unknown).
  struct Confinement {
    bool Active = false;
    size_t LandlockAbi = 0;
    std::string Warning;
    /// What the compiles could read and execute (absent before they were
    /// confined, and in summaries of earlier versions).
    std::optional<std::vector<std::string>> Readable, Executable;
  };
  std::optional<Confinement> Confined;
  /// Whether the run's opt and llc ran in mlgo-compile-server (absent: unknown).
  struct CompileServerUse {
    bool Used = false;
    std::string Reason;
    size_t PeakRssKb = 0, Starts = 0;
  };
  std::optional<CompileServerUse> CompileServer;
};

/// Reads and validates summary.json; nullopt when the file does not exist.
llvm::Expected<std::optional<HarvestSummaryFile>> readHarvestSummary(llvm::StringRef path);

/// The default-size cache: each module's native size with the ordinary inliner.
struct DefaultSizeCacheFile {
  std::optional<nlohmann::ordered_json> Options;
  std::map<std::string, std::pair<uint64_t, std::string>> Sizes; // module -> size, line as written
};

/// Reads and validates default_sizes.jsonl; a missing file is empty.
llvm::Expected<DefaultSizeCacheFile> readDefaultSizeCache(llvm::StringRef path);

/// What merge-harvest reads of a shard directory.
struct HarvestDirectory {
  HarvestJournal Journal;
  std::optional<HarvestSummaryFile> Summary;
  /// The cache, or the reason it is ignored (it only saves recompiles).
  DefaultSizeCacheFile DefaultSizes;
  std::optional<std::string> DefaultSizesIgnored;
};

/// Reads a harvest directory's journal, summary and cache (refused when
/// checkNoUnfinishedCommit says so).
llvm::Expected<HarvestDirectory> readHarvestDirectory(llvm::StringRef dir);

/// An error when `dir` holds an exploration killed while it installed its
/// result (OUT/explore/commit/): its logs and journal then disagree until
/// the same harvest-logs command finishes it (ExplorationCommit.h).
llvm::Error checkNoUnfinishedCommit(llvm::StringRef dir);

/// The options header with what does not shape the logs left out, for
/// comparing shards of one harvest: the shard spec (each shard has its own).
nlohmann::ordered_json withoutShard(const nlohmann::ordered_json &options);

} // namespace mlgo
