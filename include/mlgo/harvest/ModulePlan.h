// Which corpus modules a harvest compiles, and in what order.
#pragma once

#include "mlgo/corpus/CorpusDescription.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlgo {

struct PlannedModule {
  std::string Name;
  uint64_t BitcodeSize = 0;
};

struct ModuleSelection {
  std::optional<std::string> Filter;         // ECMAScript regex matched at the start of the name (Python re.match)
  std::optional<std::set<std::string>> Only; // only these modules (an --explore round)
  double SamplingRate = 1.0;
  uint64_t Seed = 0;
  unsigned ShardIndex = 0, ShardCount = 1;
};

/// Modules sorted largest .bc first (ties by name), filtered, sampled as
/// ml-compiler-opt's bucket sampler does (one module drawn from each of
/// int(n * rate) equal slices of the sorted list, seeded), then every
/// ShardCount-th module from ShardIndex. A missing .bc is an Error.
llvm::Expected<std::vector<PlannedModule>> planModules(const CorpusDescription &corpus, llvm::StringRef corpusDir,
                                                       const ModuleSelection &selection);

/// A corpus' description and the modules `selection` plans of it.
struct PlannedCorpus {
  CorpusDescription Corpus;
  std::vector<PlannedModule> Plan;
};
/// Reads `corpusDir`'s description and plans its modules (planModules).
llvm::Expected<PlannedCorpus> planCorpus(const std::string &corpusDir, const ModuleSelection &selection);

/// "I/N" (0 <= I < N), "auto" or "auto/N": see resolveShard (ShardSpec.h).
llvm::Error parseShard(llvm::StringRef text, ModuleSelection &selection);

} // namespace mlgo
