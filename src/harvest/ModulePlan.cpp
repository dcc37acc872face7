#include "mlgo/harvest/ModulePlan.h"

#include "mlgo/corpus/ModuleNaming.h"
#include "mlgo/support/PathUtil.h"

#include <algorithm>
#include <cstdlib>
#include <random>
#include <regex>
#include <sys/stat.h>

namespace mlgo {

llvm::Expected<std::vector<PlannedModule>> planModules(const CorpusDescription &corpus, llvm::StringRef corpusDir,
                                                       const ModuleSelection &selection) {
  std::optional<std::regex> filter;
  if (selection.Filter) {
    try {
      filter.emplace(*selection.Filter, std::regex::ECMAScript);
    } catch (const std::regex_error &e) {
      return llvm::createStringError("invalid --modules_filter '%s': %s", selection.Filter->c_str(), e.what());
    }
  }
  std::vector<PlannedModule> modules;
  for (const std::string &name : corpus.Modules) {
    if (llvm::Error e = checkModuleName(name))
      return llvm::createStringError("%s/%s: %s (validate-corpus reports such names); it would also write outside "
                                     "--output_dir",
                                     corpusDir.str().c_str(), CorpusDescriptionFile,
                                     llvm::toString(std::move(e)).c_str());
    if (filter && !std::regex_search(name, *filter, std::regex_constants::match_continuous))
      continue;
    std::string bc = joinPath(corpusDir, name + ".bc");
    struct stat st;
    if (::stat(bc.c_str(), &st) != 0)
      return llvm::createStringError("%s: the corpus lists module '%s' but its .bc is missing", bc.c_str(),
                                     name.c_str());
    modules.push_back({name, static_cast<uint64_t>(st.st_size)});
  }
  auto largestFirst = [](const PlannedModule &a, const PlannedModule &b) {
    return a.BitcodeSize != b.BitcodeSize ? a.BitcodeSize > b.BitcodeSize : a.Name < b.Name;
  };
  std::sort(modules.begin(), modules.end(), largestFirst);
  if (selection.SamplingRate < 1.0) {
    size_t k = static_cast<size_t>(static_cast<double>(modules.size()) * selection.SamplingRate);
    std::mt19937_64 rng(selection.Seed);
    std::vector<PlannedModule> sample;
    for (size_t slice = 0; slice < k; ++slice) {
      size_t begin = slice * modules.size() / k, end = (slice + 1) * modules.size() / k;
      sample.push_back(modules[begin + rng() % (end - begin)]);
    }
    modules = std::move(sample);
  }
  std::vector<PlannedModule> shard;
  for (size_t i = selection.ShardIndex; i < modules.size(); i += selection.ShardCount)
    shard.push_back(modules[i]);
  return shard;
}

llvm::Error parseShard(llvm::StringRef text, ModuleSelection &selection) {
  long index, count;
  if (text == "auto") {
    const char *id = std::getenv("SLURM_ARRAY_TASK_ID");
    const char *total = std::getenv("SLURM_ARRAY_TASK_COUNT");
    const char *min = std::getenv("SLURM_ARRAY_TASK_MIN");
    if (!id || !total)
      return llvm::createStringError("--shard=auto needs SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (run it as a "
                                     "Slurm array job, or give --shard=I/N)");
    if (llvm::StringRef(id).getAsInteger(10, index) || llvm::StringRef(total).getAsInteger(10, count))
      return llvm::createStringError("--shard=auto: SLURM_ARRAY_TASK_ID=%s, SLURM_ARRAY_TASK_COUNT=%s are not numbers",
                                     id, total);
    long base = 0;
    if (min && !llvm::StringRef(min).getAsInteger(10, base))
      index -= base;
  } else {
    auto [i, n] = text.split('/');
    if (i.getAsInteger(10, index) || n.getAsInteger(10, count))
      return llvm::createStringError("--shard must be I/N or auto, not '%s'", text.str().c_str());
  }
  if (count < 1 || index < 0 || index >= count)
    return llvm::createStringError("--shard %ld/%ld: need 0 <= I < N", index, count);
  selection.ShardIndex = static_cast<unsigned>(index);
  selection.ShardCount = static_cast<unsigned>(count);
  return llvm::Error::success();
}

} // namespace mlgo
