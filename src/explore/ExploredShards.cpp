#include "mlgo/explore/ExploredShards.h"

#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/MemoryBuffer.h"

namespace mlgo {
namespace {

using Json = nlohmann::ordered_json;

struct Trajectory {
  std::string Line; // as the shard wrote it
  std::string File; // its explore.jsonl, for messages
  bool Kept = false;
  std::optional<uint64_t> NativeSize;
  std::optional<size_t> Horizon; // decisions; none when it failed
};

bool isCount(const Json &value) { return value.is_number_unsigned(); }

// Checks one line of a shard's explore.jsonl against what harvest-logs
// writes (explore_trajectory.schema.json); "" when it is that.
std::string lineProblem(const Json &j) {
  if (!j.is_object())
    return "not a JSON object";
  static const char *const keys[] = {"module", "trajectory", "base_policy", "flipped_step", "flipped_site", "status",
                                     "reason", "detail",     "native_size", "kept",         "decisions"};
  for (const char *key : keys)
    if (!j.contains(key))
      return std::string("has no ") + key +
             (std::string(key) == "flipped_site" ? " (explored by an mlgo-corpus before it was added: explore the "
                                                   "shard again)"
                                                 : "");
  // A search's lines also name each trajectory's parent (null for the base).
  bool parent = j.contains("parent");
  if (j.size() != std::size(keys) + parent)
    return "has other keys than explore_trajectory.schema.json's";
  if (parent && !j["parent"].is_null() && !isCount(j["parent"]))
    return "parent is neither null nor a count";
  for (const char *key : {"module", "base_policy", "status", "reason", "detail"})
    if (!j[key].is_string())
      return std::string(key) + " is not a string";
  if (!isCount(j["trajectory"]))
    return "trajectory is not a count";
  for (const char *key : {"flipped_step", "native_size"})
    if (!j[key].is_null() && !isCount(j[key]))
      return std::string(key) + " is neither null nor a count";
  const Json &site = j["flipped_site"];
  if (!site.is_null()) {
    if (!site.is_object() || site.size() != 4 || !site.contains("caller") || !site.contains("callee") ||
        !site.contains("site") || !site.contains("loc"))
      return "flipped_site is neither null nor an object of caller, callee, site and loc";
    if (!site["caller"].is_string() || !site["callee"].is_string() || !isCount(site["site"]) ||
        !(site["loc"].is_null() || site["loc"].is_string()))
      return "flipped_site's caller, callee, site or loc has the wrong type";
  }
  if (j["flipped_step"].is_null() && !site.is_null())
    return "flipped_site names a call site but flipped_step is null";
  if (!j["kept"].is_boolean())
    return "kept is not a boolean";
  const Json &decisions = j["decisions"];
  if (!decisions.is_null() && !decisions.is_array())
    return "decisions is neither null nor an array";
  if (decisions.is_array())
    for (const Json &d : decisions)
      if (!isCount(d) || d.get<uint64_t>() > 1)
        return "decisions holds something other than 0 and 1";
  if (decisions.is_null() != j["native_size"].is_null())
    return "a trajectory has both decisions and a native size, or neither";
  return "";
}

// The explore summary entry's settings every shard must share.
llvm::Expected<Json> sharedSettings(const std::vector<const ExploredShard *> &explored) {
  Json settings;
  const ExploredShard *first = nullptr;
  for (const ExploredShard *shard : explored) {
    const Json &explore = (*shard->Summary)["explore"];
    if (!explore.is_object() || !isCount(explore.value("trajectories_per_module", Json())) ||
        !explore.value("order", Json()).is_string())
      return llvm::createStringError("%s: summary.json's explore has no trajectories_per_module and order",
                                     shard->Name.c_str());
    Json mine = {{"trajectories_per_module", explore["trajectories_per_module"]}, {"order", explore["order"]}};
    if (!first)
      settings = mine, first = shard;
    else if (mine != settings)
      return llvm::createStringError("shards explored differently: %s %s, %s %s", first->Name.c_str(),
                                     settings.dump().c_str(), shard->Name.c_str(), mine.dump().c_str());
  }
  return settings;
}

// One shard's explore.jsonl, module by module.
llvm::Error readTable(const ExploredShard &shard, std::map<std::string, std::vector<Trajectory>> &modules) {
  std::string path = joinPath(shard.Dir, "explore.jsonl");
  // Below the shard, as its logs are: no link, no FIFO.
  auto fd = openRegularFileBeneath(shard.Dir, "explore.jsonl");
  if (!fd)
    return llvm::createStringError("%s was explored (summary.json's explore) but its explore.jsonl cannot be "
                                   "read: %s",
                                   shard.Name.c_str(), llvm::toString(fd.takeError()).c_str());
  auto text = llvm::MemoryBuffer::getOpenFile(fd->get(), path, /*FileSize=*/-1, /*RequiresNullTerminator=*/false);
  if (!text)
    return llvm::createStringError(text.getError(), "cannot read %s: %s", path.c_str(),
                                   text.getError().message().c_str());
  llvm::StringRef rest = (*text)->getBuffer();
  std::set<std::string> mine;
  for (size_t number = 1; !rest.empty(); ++number) {
    auto [line, after] = rest.split('\n');
    rest = after;
    Json j = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    std::string problem = j.is_discarded() ? "not JSON" : lineProblem(j);
    if (problem.empty() && !shard.Modules.count(j["module"].get<std::string>()))
      problem = "module '" + j["module"].get<std::string>() + "' is not one its journal finished";
    if (!problem.empty())
      return llvm::createStringError("%s:%zu: %s", path.c_str(), number, problem.c_str());
    std::string module = j["module"];
    std::vector<Trajectory> &chain = modules[module];
    if (mine.insert(module).second && !chain.empty())
      return llvm::createStringError("%s:%zu: module '%s' was explored by another shard too", path.c_str(), number,
                                     module.c_str());
    if (j["trajectory"].get<uint64_t>() != chain.size())
      return llvm::createStringError("%s:%zu: trajectory %s of '%s' where %zu was due", path.c_str(), number,
                                     j["trajectory"].dump().c_str(), module.c_str(), chain.size());
    Trajectory t{line.str(), path, j["kept"].get<bool>(), std::nullopt, std::nullopt};
    if (!j["native_size"].is_null())
      t.NativeSize = j["native_size"].get<uint64_t>(), t.Horizon = j["decisions"].size();
    chain.push_back(std::move(t));
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::optional<MergedExploration>> mergeExploredShards(const std::vector<ExploredShard> &shards) {
  std::vector<const ExploredShard *> explored, plain;
  for (const ExploredShard &shard : shards)
    if (shard.Summary)
      (shard.Summary->contains("explore") ? explored : plain).push_back(&shard);
  if (explored.empty())
    return std::nullopt;
  if (!plain.empty())
    return llvm::createStringError("%s was explored (summary.json's explore) but %s was not: an explored shard "
                                   "joins only explored shards (rerun that shard with the same --explore; an "
                                   "interrupted exploration resumes)",
                                   explored.front()->Name.c_str(), plain.front()->Name.c_str());
  auto settings = sharedSettings(explored);
  if (!settings)
    return settings.takeError();

  std::map<std::string, std::vector<Trajectory>> modules; // name order, as one run writes them
  for (const ExploredShard *shard : explored)
    if (llvm::Error e = readTable(*shard, modules))
      return std::move(e);

  MergedExploration merged;
  size_t trajectories = 0, failed = 0, improved = 0;
  uint64_t baseTotal = 0, keptTotal = 0;
  for (const auto &[name, chain] : modules) {
    const Trajectory &base = chain.front();
    size_t keptAt = chain.size();
    for (size_t i = 0; i < chain.size(); ++i) {
      merged.Table += chain[i].Line + "\n";
      if (chain[i].Kept)
        keptAt = keptAt == chain.size() ? i : chain.size() + 1;
      if (i > 0)
        ++trajectories, failed += !chain[i].NativeSize;
    }
    if (!base.NativeSize || keptAt >= chain.size() || !chain[keptAt].NativeSize)
      return llvm::createStringError("%s: the trajectories of '%s' have no successful base, or not exactly one "
                                     "kept one that succeeded",
                                     base.File.c_str(), name.c_str());
    const Trajectory &kept = chain[keptAt];
    improved += keptAt != 0;
    baseTotal += *base.NativeSize;
    keptTotal += *kept.NativeSize;
    merged.KeptSize[name] = *kept.NativeSize;
    merged.Modules.push_back({name, "", *kept.NativeSize, *base.NativeSize, *kept.Horizon, *base.Horizon});
  }
  merged.Summary = {{"trajectories_per_module", (*settings)["trajectories_per_module"]},
                    {"order", (*settings)["order"]},
                    {"modules", modules.size()},
                    {"explored", trajectories},
                    {"failed", failed},
                    {"improved", improved},
                    {"base_total_size", baseTotal},
                    {"kept_total_size", keptTotal}};
  // How many were forked rather than compiled: the shards' sum, when each says.
  size_t forked = 0;
  bool everyShardSays = true;
  for (const ExploredShard *shard : explored) {
    const Json &count = (*shard->Summary)["explore"].value("forked", Json());
    everyShardSays = everyShardSays && isCount(count);
    forked += everyShardSays ? count.get<size_t>() : 0;
  }
  if (everyShardSays) {
    Json ordered;
    for (auto &[key, value] : merged.Summary.items()) {
      ordered[key] = value;
      if (key == "improved")
        ordered["forked"] = std::min(forked, trajectories);
    }
    merged.Summary = std::move(ordered);
  }
  return merged;
}

} // namespace mlgo
