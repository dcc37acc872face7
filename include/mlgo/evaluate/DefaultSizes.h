// The ordinary inliner's native size per module: the baseline a
// size-rewarded harvest's reward divides by (ml-compiler-opt's). Known
// sizes come from the run's own default_sizes.jsonl, then from the shared
// --baseline_cache (BaselineCache.h); the harvest compiles the rest once,
// and each computed size is kept in both. A default harvest compiles
// exactly the baseline, so its sizes fill the shared cache.
#pragma once

#include "mlgo/compile/CompilerDriver.h"
#include "mlgo/evaluate/BaselineCache.h"
#include "mlgo/support/JsonLinesJournal.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace mlgo {

class DefaultSizes {
public:
  DefaultSizes(Problem decisions, CompilerSettings compiler) : Decisions(decisions), Compiler(std::move(compiler)) {}

  /// The run's own file at `path`, started afresh (`truncate`) or holding
  /// `known`, each new size appended with `options` as its header.
  llvm::Error openRunFile(const std::string &path, bool truncate, const nlohmann::ordered_json &options,
                          std::map<std::string, uint64_t> known);

  /// --baseline_cache at `cacheDir` ("" : none). A cache below `outputDir`
  /// is made there through no link; one the user names elsewhere is theirs.
  llvm::Error openCache(const std::string &cacheDir, const std::string &outputDir);
  const std::optional<BaselineCache> &cache() const { return Cache; }

  /// `in`'s key in the shared cache; nullopt without a cache or when its
  /// bitcode cannot be read.
  std::optional<std::string> keyOf(const ModuleInputs &in) const;

  /// `module`'s known size (counted as cached), or nullopt: then the caller
  /// compiles it and calls computed().
  std::optional<uint64_t> find(const std::string &module, const ModuleInputs &in);
  /// A size the caller compiled: counted, kept in the run's file and the cache.
  void computed(const std::string &module, const ModuleInputs &in, uint64_t size);
  /// A default harvest's own size of `module`: stored in the cache when it
  /// is not there yet (entries are never rewritten by a mere equal).
  void fill(const std::string &module, const ModuleInputs &in, uint64_t size);

  std::atomic<size_t> Computed{0}, Cached{0}, Stored{0};

private:
  void remember(const std::string &module, uint64_t size);

  Problem Decisions;
  CompilerSettings Compiler;
  std::string Identity; // compilerIdentity, with a cache
  std::mutex Mutex;
  std::map<std::string, uint64_t> Known;
  JournalAppender RunFile;
  std::optional<BaselineCache> Cache;
};

} // namespace mlgo
