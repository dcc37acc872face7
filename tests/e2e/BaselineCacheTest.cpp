// harvest-logs --baseline_cache=DIR (issue #23): the default policy's native
// sizes, shared by every harvest that names the directory. A second harvest
// compiles no baseline; concurrent harvests never store a wrong size; an
// edited entry, another flag or another compiler is a miss.
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <future>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

constexpr int Modules = 6;

class BaselineCacheHarvest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    makeHarvestCorpus(Fixture->path(), Modules);
    // The reference: each module's baseline without any cache.
    mustRun(harvest(*Fixture / "reference", ""));
    for (const auto &[module, record] : journalByModule(*Fixture / "reference"))
      Reference[module] = record["default_size"].get<uint64_t>();
    ASSERT_EQ(Reference.size(), static_cast<size_t>(Modules));
  }
  static void TearDownTestSuite() { delete Fixture; }

  // A harvest with a random policy: rewards against the default's size.
  static std::string harvest(const std::string &out, const std::string &flags) {
    return harvestCommand(*Fixture / "corpus", out, "--policy=random:0.5:3 --num_workers=2 " + flags);
  }
  std::string cached(const std::string &out, const std::string &flags = "") {
    return harvest(out, "--baseline_cache=" + quote(Work / "cache") + " " + flags);
  }
  static std::pair<size_t, size_t> baselines(const std::string &out) {
    nlohmann::json b = harvestSummary(out)["baselines"];
    return {b["computed"].get<size_t>(), b["cached"].get<size_t>()};
  }
  // Every module's default size is the reference's.
  static void expectReferenceSizes(const std::string &out) {
    auto journal = journalByModule(out);
    ASSERT_EQ(journal.size(), static_cast<size_t>(Modules));
    for (const auto &[module, record] : journal) {
      ASSERT_EQ(record["status"], "ok") << module << record.dump();
      EXPECT_EQ(record["default_size"].get<uint64_t>(), Reference[module]) << module;
    }
  }
  std::vector<std::string> entries() {
    std::vector<std::string> files;
    for (const auto &entry : fs::recursive_directory_iterator(Work / "cache"))
      if (entry.is_regular_file())
        files.push_back(entry.path());
    return files;
  }

  static TempDir *Fixture;
  static std::map<std::string, uint64_t> Reference;
  TempDir Work;
};
TempDir *BaselineCacheHarvest::Fixture = nullptr;
std::map<std::string, uint64_t> BaselineCacheHarvest::Reference;

TEST_F(BaselineCacheHarvest, ASecondHarvestCompilesNoBaseline) {
  mustRun(cached(Work / "first"));
  EXPECT_EQ(baselines(Work / "first"), std::make_pair(size_t(Modules), size_t(0)));
  expectReferenceSizes(Work / "first");
  EXPECT_EQ(entries().size(), static_cast<size_t>(Modules));
  // Another output directory, same cache: no baseline compiled.
  mustRun(cached(Work / "second"));
  EXPECT_EQ(baselines(Work / "second"), std::make_pair(size_t(0), size_t(Modules)));
  expectReferenceSizes(Work / "second");
  auto a = journalByModule(Work / "first"), b = journalByModule(Work / "second");
  for (const auto &[module, record] : a)
    EXPECT_EQ(record["reward"], b[module]["reward"]) << module;
  // Without the cache the count says what was compiled.
  mustRun(harvest(Work / "none", ""));
  EXPECT_EQ(baselines(Work / "none"), std::make_pair(size_t(Modules), size_t(0)));
}

// A default harvest compiles the baselines themselves: with the cache it
// stores them, and the next policy's harvest compiles none.
TEST_F(BaselineCacheHarvest, ADefaultHarvestFillsTheCache) {
  std::string base = Work / "default";
  mustRun(harvestCommand(*Fixture / "corpus", base,
                         "--policy=default --num_workers=2 --baseline_cache=" + quote(Work / "cache")));
  nlohmann::json b = harvestSummary(base)["baselines"];
  EXPECT_EQ(b["stored"], Modules) << b.dump();
  EXPECT_EQ(b["computed"], 0) << "a default harvest compiles no extra baseline";
  EXPECT_EQ(entries().size(), static_cast<size_t>(Modules));
  for (const auto &[module, record] : journalByModule(base))
    EXPECT_EQ(record["native_size"].get<uint64_t>(), Reference[module]) << module;
  mustRun(cached(Work / "random"));
  EXPECT_EQ(baselines(Work / "random"), std::make_pair(size_t(0), size_t(Modules)));
  expectReferenceSizes(Work / "random");
  // Run again: nothing new to store, and the summary says so by leaving it out.
  mustRun(harvestCommand(*Fixture / "corpus", Work / "again",
                         "--policy=default --num_workers=2 --baseline_cache=" + quote(Work / "cache")));
  EXPECT_FALSE(harvestSummary(Work / "again")["baselines"].contains("stored"));
}

TEST_F(BaselineCacheHarvest, AnEditedOrForeignEntryIsRecomputedNeverTrusted) {
  mustRun(cached(Work / "first"));
  std::vector<std::string> files = entries();
  ASSERT_EQ(files.size(), static_cast<size_t>(Modules));
  // One entry's size edited (still JSON), another replaced by a third's.
  std::string edited = readFile(files[0]);
  nlohmann::json entry = nlohmann::json::parse(edited);
  entry["native_size"] = entry["native_size"].get<uint64_t>() + 100;
  writeFile(files[0], entry.dump());
  writeFile(files[1], readFile(files[2]));
  CommandResult r = run(cached(Work / "second"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(baselines(Work / "second"), std::make_pair(size_t(2), size_t(Modules - 2)));
  EXPECT_NE(r.Err.find("does not check"), std::string::npos) << r.Err;
  EXPECT_NE(r.Err.find("another module's entry"), std::string::npos) << r.Err;
  expectReferenceSizes(Work / "second");
  // Both were stored again, right.
  mustRun(cached(Work / "third"));
  EXPECT_EQ(baselines(Work / "third"), std::make_pair(size_t(0), size_t(Modules)));
}

TEST_F(BaselineCacheHarvest, AnotherFlagOrCompilerMisses) {
  mustRun(cached(Work / "first"));
  mustRun(cached(Work / "flag", "--passes='default<O2>'"));
  EXPECT_EQ(baselines(Work / "flag"), std::make_pair(size_t(Modules), size_t(0)));
  // The same opt behind another file: another compiler, as far as the cache knows.
  std::string wrapper = writeScript(Work / "opt-wrapper", "#!/bin/sh\nexec opt-22 \"$@\"\n");
  mustRun(cached(Work / "compiler", "--opt_path=" + quote(wrapper)));
  EXPECT_EQ(baselines(Work / "compiler"), std::make_pair(size_t(Modules), size_t(0)));
  expectReferenceSizes(Work / "compiler");
  EXPECT_EQ(entries().size(), static_cast<size_t>(3 * Modules));
}

TEST_F(BaselineCacheHarvest, ConcurrentHarvestsSharingTheCacheNeverStoreAWrongSize) {
  auto a = std::async(std::launch::async, [&] { return run(cached(Work / "a")); });
  auto b = std::async(std::launch::async, [&] { return run(cached(Work / "b")); });
  CommandResult ra = a.get(), rb = b.get();
  ASSERT_EQ(ra.ExitCode, 0) << ra.Err;
  ASSERT_EQ(rb.ExitCode, 0) << rb.Err;
  auto [computedA, cachedA] = baselines(Work / "a");
  auto [computedB, cachedB] = baselines(Work / "b");
  EXPECT_EQ(computedA + cachedA, static_cast<size_t>(Modules));
  EXPECT_EQ(computedB + cachedB, static_cast<size_t>(Modules));
  expectReferenceSizes(Work / "a");
  expectReferenceSizes(Work / "b");
  EXPECT_EQ(entries().size(), static_cast<size_t>(Modules)) << "one entry per module, no temporaries";
  mustRun(cached(Work / "c"));
  EXPECT_EQ(baselines(Work / "c"), std::make_pair(size_t(0), size_t(Modules)));
  expectReferenceSizes(Work / "c");
}

} // namespace
