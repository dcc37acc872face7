// --baseline_cache (issue #23): sizes come back only for their own key, from
// an entry that checks; whatever else is in the directory is a miss; and
// writers racing on one key leave one whole entry.
#include "mlgo/evaluate/BaselineCache.h"

#include "support/TestSupport.h"

#include <atomic>
#include <filesystem>
#include <thread>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string KeyA(64, 'a'), KeyB = "b" + std::string(63, '0');

BaselineCache openCache(const std::string &dir) {
  auto cache = BaselineCache::open(dir);
  EXPECT_TRUE(static_cast<bool>(cache)) << llvm::toString(cache.takeError());
  return std::move(*cache);
}

TEST(BaselineCache, AStoredSizeIsFoundUnderItsKeyOnly) {
  TempDir dir;
  BaselineCache cache = openCache(dir / "cache");
  std::string why;
  EXPECT_FALSE(cache.lookup(KeyA, &why));
  EXPECT_EQ(why, "absent");
  ASSERT_FALSE(static_cast<bool>(cache.store(KeyA, 1234, "m0")));
  EXPECT_EQ(cache.lookup(KeyA), std::optional<uint64_t>(1234));
  EXPECT_FALSE(cache.lookup(KeyB, &why));
  EXPECT_EQ(why, "absent");
  ASSERT_FALSE(static_cast<bool>(cache.store(KeyA, 99, "m0"))); // replaced
  EXPECT_EQ(cache.lookup(KeyA), std::optional<uint64_t>(99));
  // Nothing but entries is left behind (no temporaries).
  std::set<std::string> files = listTree(dir / "cache", /*includeHidden=*/true);
  EXPECT_EQ(files, (std::set<std::string>{"aa/", "aa/" + KeyA + ".json"}));
}

TEST(BaselineCache, DamagedEditedForeignOrStrangeEntriesAreMisses) {
  TempDir dir;
  BaselineCache cache = openCache(dir / "cache");
  ASSERT_FALSE(static_cast<bool>(cache.store(KeyA, 1234, "m0")));
  std::string good = readFile(cache.entryPath(KeyA));
  auto expectMiss = [&](const std::string &content, const std::string &reason) {
    writeFile(cache.entryPath(KeyB), content);
    std::string why;
    EXPECT_FALSE(cache.lookup(KeyB, &why)) << content;
    EXPECT_NE(why.find(reason), std::string::npos) << why;
  };
  // Another key's entry under this key's name.
  expectMiss(good, "another module's entry");
  std::string own = good;
  for (size_t at; (at = own.find(KeyA)) != std::string::npos;)
    own.replace(at, KeyA.size(), KeyB);
  // The key rewritten, but the check was made for the other key.
  expectMiss(own, "does not check");
  // The size edited.
  ASSERT_FALSE(static_cast<bool>(cache.store(KeyB, 1234, "m1")));
  std::string edited = readFile(cache.entryPath(KeyB));
  edited.replace(edited.find("1234"), 4, "1000");
  expectMiss(edited, "does not check");
  expectMiss(good.substr(0, good.size() / 2), "not a baseline cache entry");
  expectMiss("", "not a baseline cache entry");
  expectMiss("\x89PNG\r\n\x1a\n", "not a baseline cache entry");
  expectMiss(std::string(5000, ' ') + good, "too large");
  std::string negative = good;
  negative.replace(negative.find("1234"), 4, "-1234");
  for (size_t at; (at = negative.find(KeyA)) != std::string::npos;)
    negative.replace(at, KeyA.size(), KeyB);
  expectMiss(negative, "lacks its size");
  // Not a regular file.
  fs::remove(cache.entryPath(KeyB));
  fs::create_directories(cache.entryPath(KeyB));
  std::string why;
  EXPECT_FALSE(cache.lookup(KeyB, &why));
  EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;
  fs::remove(cache.entryPath(KeyB));
  ASSERT_EQ(::mkfifo(cache.entryPath(KeyB).c_str(), 0600), 0);
  EXPECT_FALSE(cache.lookup(KeyB, &why)); // a FIFO is not opened (it would block)
  EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;
}

TEST(BaselineCache, WritersRacingOnOneKeyLeaveOneWholeEntry) {
  TempDir dir;
  BaselineCache cache = openCache(dir / "cache");
  std::atomic<bool> stop{false};
  std::atomic<size_t> bad{0}, seen{0};
  std::thread reader([&] {
    while (!stop) {
      std::string why;
      std::optional<uint64_t> size = cache.lookup(KeyA, &why);
      if (size)
        seen += 1, bad += *size != 4321;
      else
        bad += why != "absent";
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&] {
      for (int i = 0; i < 200; ++i)
        bad += static_cast<bool>(cache.store(KeyA, 4321, "m"));
    });
  for (std::thread &t : writers)
    t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(cache.lookup(KeyA), std::optional<uint64_t>(4321));
  EXPECT_EQ(listTree(dir / "cache", /*includeHidden=*/true).size(), 2u) << "temporaries were left behind";
}

TEST(BaselineCache, TheKeyChangesWithEverythingTheBaselineDependsOn) {
  BaselineKeyInputs base;
  base.Compiler.Kind = CompilerKind::Opt;
  base.CompilerIdentity = "opt /usr/lib/llvm-22/bin/opt 100 1; llc /usr/lib/llvm-22/bin/llc 200 2";
  const std::string bitcode = "BC\xc0\xde module";
  std::string key = baselineKey(base, bitcode);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, baselineKey(base, bitcode));
  std::set<std::string> keys = {key};
  auto differs = [&](BaselineKeyInputs changed, const std::string &code, const char *what) {
    EXPECT_TRUE(keys.insert(baselineKey(changed, code)).second) << what << " does not change the key";
  };
  differs(base, bitcode + " ", "the bitcode");
  BaselineKeyInputs c = base;
  c.Compiler.Passes = "default<O2>";
  differs(c, bitcode, "--passes");
  c = base;
  c.Compiler.LlcFlags.push_back("-O3");
  differs(c, bitcode, "--llc_flags");
  c = base;
  c.Compiler.ExtraFlags.push_back("-inline-threshold=500");
  differs(c, bitcode, "--extra_compiler_flags");
  c = base;
  c.CompilerIdentity += " ";
  differs(c, bitcode, "the compiler");
  c = base;
  c.Decisions = Problem::RegallocEvict;
  differs(c, bitcode, "the problem");
  c = base;
  c.Compiler.Kind = CompilerKind::Clang;
  differs(c, bitcode, "the compiler kind");
  c.ModuleCommandLine = {"-cc1", "-Oz"};
  differs(c, bitcode, "clang's module command line");
  // Lists cannot run together: ["-a", "b"] is not ["-ab"].
  c = base;
  c.Compiler.ExtraFlags = {"-a", "b"};
  differs(c, bitcode, "a split flag");
  c.Compiler.ExtraFlags = {"-ab"};
  differs(c, bitcode, "a joined flag");
}

} // namespace
