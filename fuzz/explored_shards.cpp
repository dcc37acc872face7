// merge-harvest's reading of explored shards (mergeExploredShards): two
// shards' explore.jsonl, the input split at "\n--\n". Shard 0 finished the
// modules a.o and lib/b.o, shard 1 c.o; both explored with K=2, order first.
// Contract: any bytes give a merged table or a clear error naming a shard's
// file, never a crash or an exception; a merged table holds only the
// shards' own modules, each with one kept trajectory, and its totals add up.
#include "FuzzSupport.h"

#include "mlgo/explore/ExploredShards.h"

#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  size_t cut = input.find("\n--\n");
  std::string_view tables[2] = {input.substr(0, cut),
                                cut == std::string_view::npos ? std::string_view() : input.substr(cut + 4)};
  static const nlohmann::ordered_json summary = {{"explore", {{"trajectories_per_module", 2}, {"order", "first"}}}};
  std::vector<mlgo::ExploredShard> shards(2);
  for (size_t i = 0; i < 2; ++i) {
    std::string dir = "shard-" + std::to_string(i);
    mlgo::fuzz::writeScratch(dir + "/explore.jsonl", reinterpret_cast<const uint8_t *>(tables[i].data()),
                             tables[i].size());
    shards[i].Dir = mlgo::fuzz::scratchDir() + "/" + dir;
    shards[i].Name = "shard " + std::to_string(i) + "/2 (" + shards[i].Dir + ")";
    shards[i].Summary = &summary;
  }
  shards[0].Modules = {"a.o", "lib/b.o"};
  shards[1].Modules = {"c.o"};

  auto merged = mlgo::mergeExploredShards(shards);
  if (!merged) {
    std::string message = llvm::toString(merged.takeError());
    FUZZ_CHECK(message.find(shards[0].Dir) != std::string::npos || message.find(shards[1].Dir) != std::string::npos,
               "an error that names no shard's file: " + message);
    return 0;
  }
  FUZZ_CHECK(merged->has_value(), "explored shards merged as unexplored");
  const mlgo::MergedExploration &m = **merged;
  uint64_t base = 0, kept = 0;
  for (const mlgo::ImitationModule &module : m.Modules) {
    FUZZ_CHECK(shards[0].Modules.count(module.Name) || shards[1].Modules.count(module.Name),
               "a module no shard finished: " + module.Name);
    FUZZ_CHECK(m.KeptSize.at(module.Name) == module.KeptSize, "two kept sizes of " + module.Name);
    base += module.BaseSize, kept += module.KeptSize;
  }
  FUZZ_CHECK(m.Summary["modules"] == m.Modules.size(), "module count");
  FUZZ_CHECK(m.Summary["base_total_size"] == base && m.Summary["kept_total_size"] == kept, "totals");
  FUZZ_CHECK(m.Table.empty() || m.Table.back() == '\n', "a table that does not end its last line");
  return 0;
}
