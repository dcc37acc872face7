// A --baseline_cache entry as harvest-logs reads it (BaselineCache::lookup):
// the input is the file found under a module's key.
// Contract: any bytes give a size or a miss with its reason, never a crash,
// an exception or a hang; a size comes only from an entry that names this
// key and whose check is the one a store of that size writes.
#include "FuzzSupport.h"

#include "mlgo/evaluate/BaselineCache.h"

#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string Key(64, 'a');
  static mlgo::BaselineCache cache = [] {
    auto opened = mlgo::BaselineCache::open(mlgo::fuzz::scratchDir() + "/cache");
    if (!opened)
      mlgo::fuzz::contractBroken("open", llvm::toString(opened.takeError()), __FILE__, __LINE__);
    return std::move(*opened);
  }();
  static mlgo::BaselineCache reference = [] {
    auto opened = mlgo::BaselineCache::open(mlgo::fuzz::scratchDir() + "/reference");
    if (!opened)
      mlgo::fuzz::contractBroken("open", llvm::toString(opened.takeError()), __FILE__, __LINE__);
    return std::move(*opened);
  }();
  std::string path = cache.entryPath(Key);
  mlgo::fuzz::writeScratch(path.substr(mlgo::fuzz::scratchDir().size() + 1), data, size);
  std::string why;
  std::optional<uint64_t> found = cache.lookup(Key, &why);
  if (!found) {
    FUZZ_CHECK(!why.empty(), "a miss without a reason");
    return 0;
  }
  nlohmann::json entry = nlohmann::json::parse(std::string(reinterpret_cast<const char *>(data), size));
  FUZZ_CHECK(entry["key"] == Key, "a size from another key's entry");
  FUZZ_CHECK(!reference.store(Key, *found, "m"), "cannot store");
  nlohmann::json stored = nlohmann::json::parse(std::ifstream(reference.entryPath(Key)));
  FUZZ_CHECK(stored["check"] == entry["check"], "a size whose check a store would not write");
  return 0;
}
