#include "mlgo/harvest/ModulePlan.h"

#include "mlgo/harvest/ShardSpec.h"

#include "mlgo/corpus/ModuleNaming.h"
#include "mlgo/support/PathUtil.h"

#include <algorithm>
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
    if (selection.Only && !selection.Only->count(name))
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
  auto shard = resolveShard(text);
  if (!shard)
    return shard.takeError();
  selection.ShardIndex = shard->Index;
  selection.ShardCount = shard->Count;
  return llvm::Error::success();
}

llvm::Expected<PlannedCorpus> planCorpus(const std::string &corpusDir, const ModuleSelection &selection) {
  auto corpus = readCorpusDescription(corpusDir);
  if (!corpus)
    return corpus.takeError();
  auto plan = planModules(*corpus, corpusDir, selection);
  if (!plan)
    return plan.takeError();
  return PlannedCorpus{std::move(*corpus), std::move(*plan)};
}

} // namespace mlgo
