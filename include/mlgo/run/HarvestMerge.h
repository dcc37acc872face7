// Joins the output directories of a sharded harvest (harvest-logs
// --shard=I/N, one directory per shard) into one harvest directory equal to a
// one-machine run over the whole selection: the same logs/ tree, one journal
// and summary in plan order, and the TFRecord dataset in plan order.
// Explored shards (--explore) also give the one-machine exploration's
// explore.jsonl, profiles and imitation TFRecord (ExploredShards.h).
#pragma once

#include "mlgo/harvest/ModulePlan.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

struct MergeOptions {
  std::string CorpusDir;
  ModuleSelection Selection;          // the shards' selection flags; the shard fields are ignored
  std::vector<std::string> ShardDirs; // ShardDirs[I] holds shard I of ShardDirs.size()
  std::string OutputDir;
  std::string TFRecordPath;  // also write the dataset
  bool AllowPartial = false; // merge what is there; list the rest in the summary
  bool HardLink = false;     // link logs instead of copying them
};

struct MergeResult {
  size_t Planned = 0, Merged = 0, Logs = 0;
  std::vector<std::string> MissingModules;
  std::vector<unsigned> MissingShards; // no directory at all
};

/// Checks every shard first: a shard directory that holds modules outside its
/// shard of the plan, disagrees with the others on problem/compiler/mode/policy,
/// or (without AllowPartial) misses modules is an Error naming the shard and
/// the absent modules, and nothing is written. Then writes OutputDir through
/// a staging directory renamed into place, and the TFRecord atomically.
llvm::Expected<MergeResult> mergeHarvest(const MergeOptions &options);

} // namespace mlgo
