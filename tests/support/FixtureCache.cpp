#include "FixtureCache.h"

#include "TestSupport.h"

#include "llvm/Support/xxhash.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace mlgo::test {
namespace {

// The compiler's identity: a rebuilt or upgraded clang-22 misses the cache.
std::string compilerIdentity() {
  std::error_code ec;
  fs::path clang = fs::canonical(MLGO_CLANG, ec);
  auto size = fs::file_size(clang, ec);
  auto time = fs::last_write_time(clang, ec).time_since_epoch().count();
  return clang.string() + "\n" + std::to_string(size) + "\n" + std::to_string(time);
}

std::string cacheKey(const std::string &command, const std::string &sourceText) {
  static const std::string compiler = compilerIdentity();
  std::string all = compiler + "\n" + command + "\n" + std::to_string(sourceText.size()) + "\n" + sourceText;
  uint64_t hash = llvm::xxh3_64bits(llvm::StringRef(all));
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

} // namespace

std::string fixtureCacheDirectory() { return MLGO_TEST_FIXTURE_CACHE; }

void compileCached(const std::string &command, const std::string &source, const std::string &output,
                   const std::string &cwd) {
  ASSERT_FALSE(fs::path(source).is_absolute()) << source;
  ASSERT_FALSE(fs::path(output).is_absolute()) << output;
  const fs::path dir = cwd.empty() ? fs::current_path() : fs::path(cwd);
  const std::string cached = fixtureCacheDirectory() + "/" + cacheKey(command, readFile(dir / source));
  fs::create_directories((dir / output).parent_path());
  std::error_code ec;
  if (fs::copy_file(cached, dir / output, fs::copy_options::overwrite_existing, ec))
    return;
  mustRun(command, dir.string());
  // Published whole (copy, then rename) so that tests in parallel never
  // copy a torn object.
  fs::create_directories(fixtureCacheDirectory());
  const std::string temporary = cached + ".tmp." + std::to_string(::getpid());
  if (fs::copy_file(dir / output, temporary, fs::copy_options::overwrite_existing, ec))
    fs::rename(temporary, cached, ec);
  fs::remove(temporary, ec);
}

} // namespace mlgo::test
