// merge-harvest of explored shards (harvest-logs --explore=K --shard=I/N):
// the shards' explore.jsonl joined in module order, as one run over every
// module writes it, and from that table the summary's `explore` and the
// modules of ml-compiler-opt's profiles and trajectories (ImitationDataset.h).
// A shard is someone else's data: every line is checked before it is used.
#pragma once

#include "mlgo/explore/ImitationDataset.h"

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlgo {

struct ExploredShard {
  std::string Dir, Name;                           // Name: "shard I/N (DIR)", for messages
  const nlohmann::ordered_json *Summary = nullptr; // its summary.json; null when it has none
  std::set<std::string> Modules;                   // the modules its journal finished
};

struct MergedExploration {
  std::string Table;                    // explore.jsonl: the shards' lines, modules in name order
  std::vector<ImitationModule> Modules; // in the same order; KeptLog left empty
  std::map<std::string, uint64_t> KeptSize;
  nlohmann::ordered_json Summary; // summary.json's explore, without profiles and trajectory_tfrecord
};

/// None when no shard was explored. An Error when only some were, when
/// their K or order differ, or when a shard's explore.jsonl is not what
/// harvest-logs writes (a module not of that shard, a gap in a module's
/// trajectories, not exactly one kept, a wrong type), naming the file and line.
llvm::Expected<std::optional<MergedExploration>> mergeExploredShards(const std::vector<ExploredShard> &shards);

} // namespace mlgo
