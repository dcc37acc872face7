#include "mlgo/evaluate/DefaultSizes.h"

#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/MemoryBuffer.h"

namespace mlgo {

llvm::Error DefaultSizes::openRunFile(const std::string &path, bool truncate, const nlohmann::ordered_json &options,
                                      std::map<std::string, uint64_t> known) {
  Known = std::move(known);
  return RunFile.open(path, truncate, options);
}

llvm::Error DefaultSizes::openCache(const std::string &cacheDir, const std::string &outputDir) {
  if (cacheDir.empty() || Cache)
    return llvm::Error::success();
  // A cache below OUT (--explore's, a batch's) is made there through no
  // link; one the user names elsewhere is theirs.
  if (isWithin(cacheDir, outputDir) && normalizePath(cacheDir) != normalizePath(outputDir)) {
    std::string relative = normalizePath(cacheDir).substr(normalizePath(outputDir).size() + 1);
    if (llvm::Error e = makeDirectoriesBeneath(outputDir, relative))
      return e;
  }
  auto cache = BaselineCache::open(cacheDir);
  if (!cache)
    return cache.takeError();
  Cache.emplace(std::move(*cache));
  Identity = compilerIdentity(Compiler);
  return llvm::Error::success();
}

std::optional<std::string> DefaultSizes::keyOf(const ModuleInputs &in) const {
  if (!Cache)
    return std::nullopt;
  auto bitcode = llvm::MemoryBuffer::getFile(in.Bitcode, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!bitcode)
    return std::nullopt;
  return baselineKey({Decisions, Compiler, Identity, in.CommandLine}, (*bitcode)->getBuffer());
}

std::optional<uint64_t> DefaultSizes::find(const std::string &module, const ModuleInputs &in) {
  {
    std::lock_guard<std::mutex> lock(Mutex);
    if (auto it = Known.find(module); it != Known.end()) {
      ++Cached;
      return it->second;
    }
  }
  // The shared cache, by what the baseline depends on (BaselineCache.h).
  std::optional<std::string> key = keyOf(in);
  if (!key)
    return std::nullopt;
  std::string why;
  if (std::optional<uint64_t> cached = Cache->lookup(*key, &why)) {
    ++Cached;
    remember(module, *cached);
    return cached;
  }
  if (why != "absent")
    log::warning(module + ": not using its baseline cache entry (" + why + "): recomputing it");
  return std::nullopt;
}

void DefaultSizes::computed(const std::string &module, const ModuleInputs &in, uint64_t size) {
  ++Computed;
  // A lost cache entry only costs a recompile.
  if (std::optional<std::string> key = keyOf(in))
    if (llvm::Error e = Cache->store(*key, size, module))
      log::warning(module + ": cannot store its baseline in the cache: " + llvm::toString(std::move(e)));
  remember(module, size);
}

void DefaultSizes::fill(const std::string &module, const ModuleInputs &in, uint64_t size) {
  std::optional<std::string> key = keyOf(in);
  if (!key)
    return;
  std::string why;
  if (Cache->lookup(*key, &why))
    return; // already there: entries are never rewritten by a mere equal
  // A lost cache entry only costs the next policy a recompile.
  if (llvm::Error e = Cache->store(*key, size, module))
    log::warning(module + ": cannot store its baseline in the cache: " + llvm::toString(std::move(e)));
  else
    ++Stored;
}

void DefaultSizes::remember(const std::string &module, uint64_t size) {
  std::lock_guard<std::mutex> lock(Mutex);
  Known[module] = size;
  // A lost cache line only costs a recompile.
  llvm::consumeError(RunFile.append({{"module", module}, {"native_size", size}}));
}

} // namespace mlgo
