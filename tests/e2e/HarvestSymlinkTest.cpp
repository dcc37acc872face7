// No symbolic link is followed below a directory the user named (issue #33,
// findings 3 and 5; docs/security.md). Module names nest (sub/m0), so a link
// planted at OUT/logs/sub, a shard's logs/sub or a baseline cache's fan-out
// directory would send removals, renames and reads elsewhere. Each test
// plants one and checks that the real tools name it and leave the files
// behind it alone. Real clang-22 and the real tools throughout.
#include "support/HarvestCorpus.h"
#include "support/PythonPackage.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

constexpr bool HavePackage = HavePythonPackage;
const std::string &PackageDir = PythonPackageDir, &Python3 = PackagePython3;

// The plugin writes sites files (--decision_sites); the fixture's harvest
// and the resumes in the tests use the same options.
const std::string HarvestFlags = "--decision_sites --mode=plugin";

class HarvestSymlink : public ::testing::Test {
protected:
  // A corpus whose first module nests (sub/m0, m1), and one harvest of it.
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    makeNestedHarvestCorpus(Fixture->path(), "nested-corpus");
    mustRun(harvestCommand(nestedCorpus(), *Fixture / "harvest", HarvestFlags));
  }
  static void TearDownTestSuite() {
    delete Fixture;
    Fixture = nullptr;
  }
  static std::string nestedCorpus() { return *Fixture / "nested-corpus"; }

  void SetUp() override {
    ASSERT_TRUE(exists(*Fixture / "harvest/logs/sub/m0.log"));
    // Files the tools do not own, where a planted link points.
    writeFile(Elsewhere + "/m0.log", "not ours\n");
    writeFile(Elsewhere + "/m0.sites.jsonl", "not ours either\n");
  }

  // A copy of the fixture's harvest.
  std::string harvestCopy(const std::string &name) {
    std::string dir = Work / name;
    fs::copy(*Fixture / "harvest", dir, fs::copy_options::recursive);
    return dir;
  }
  // OUT/logs/sub replaced by a link to Elsewhere.
  void plantLink(const std::string &harvest) {
    fs::remove_all(harvest + "/logs/sub");
    fs::create_directory_symlink(Elsewhere, harvest + "/logs/sub");
  }
  void expectElsewhereUntouched() {
    EXPECT_EQ(listTree(Elsewhere, /*includeHidden=*/true), (std::set<std::string>{"m0.log", "m0.sites.jsonl"}));
    EXPECT_EQ(readFile(Elsewhere + "/m0.log"), "not ours\n");
    EXPECT_EQ(readFile(Elsewhere + "/m0.sites.jsonl"), "not ours either\n");
  }
  // The journal with sub/m0's record rewritten by `edit`.
  static void editJournal(const std::string &harvest, const std::function<void(nlohmann::json &)> &edit) {
    std::ifstream in(harvest + "/harvest.jsonl");
    std::string text, line;
    while (std::getline(in, line)) {
      nlohmann::json j = nlohmann::json::parse(line);
      if (j.value("module", "") == "sub/m0")
        edit(j);
      text += j.dump() + "\n";
    }
    writeFile(harvest + "/harvest.jsonl", text);
  }

  static TempDir *Fixture;
  TempDir Work;
  std::string Elsewhere = Work / "elsewhere";
};

TempDir *HarvestSymlink::Fixture = nullptr;

// Resume removes logs its journal does not promise: a failed sub/m0 whose
// log "exists" behind OUT/logs/sub. It must name the link and stop, never
// delete Elsewhere's files (the reproduction deleted both).
TEST_F(HarvestSymlink, ResumeNeverRemovesThroughALinkInOutLogs) {
  std::string out = harvestCopy("out");
  plantLink(out);
  editJournal(out, [](nlohmann::json &record) {
    record["status"] = "failed";
    record["reason"] = "compiler_failed";
    record["log_written"] = false;
  });
  CommandResult r = run(harvestCommand(nestedCorpus(), out, HarvestFlags));
  EXPECT_NE(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find(out + "/logs/sub: a symbolic link below " + out), std::string::npos) << r.Err;
  expectElsewhereUntouched();
}

// An ok sub/m0 whose log lies behind the link is not taken as done either.
TEST_F(HarvestSymlink, ResumeNamesALinkBeforeTrustingALogBehindIt) {
  std::string out = harvestCopy("out");
  plantLink(out);
  CommandResult r = run(harvestCommand(nestedCorpus(), out, HarvestFlags + " --force"));
  EXPECT_NE(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find(out + "/logs/sub: a symbolic link below " + out), std::string::npos) << r.Err;
  expectElsewhereUntouched();
}

// A fresh run into an OUT whose logs/sub is a link: sub/m0's log is never
// renamed there; the module fails naming the link, m1 is harvested.
TEST_F(HarvestSymlink, ANewLogIsNeverRenamedThroughALink) {
  std::string out = Work / "fresh";
  fs::create_directories(out + "/logs");
  fs::create_directory_symlink(Elsewhere, out + "/logs/sub");
  run(harvestCommand(nestedCorpus(), out, HarvestFlags));
  auto journal = journalByModule(out);
  ASSERT_EQ(journal.size(), 2u);
  EXPECT_EQ(journal["m1"]["status"], "ok") << journal["m1"];
  EXPECT_EQ(journal["sub/m0"]["status"], "failed") << journal["sub/m0"];
  EXPECT_EQ(journal["sub/m0"]["reason"], "write_failed") << journal["sub/m0"];
  EXPECT_NE(journal["sub/m0"]["detail"].get<std::string>().find(out + "/logs/sub: a symbolic link"), std::string::npos)
      << journal["sub/m0"];
  expectElsewhereUntouched();
}

// Work directories are emptied before and after each module: one planted
// as a link (OUT/.mlgo-harvest/work/0 -> Elsewhere) is removed itself, and
// what it names is never emptied.
TEST_F(HarvestSymlink, AWorkDirectoryPlantedAsALinkIsNeverEmptied) {
  std::string out = Work / "planted-work";
  fs::create_directories(out + "/.mlgo-harvest/work");
  for (const char *slot : {"0", "1"})
    fs::create_directory_symlink(Elsewhere, out + "/.mlgo-harvest/work/" + slot);
  CommandResult r = run(harvestCommand(nestedCorpus(), out, HarvestFlags));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto journal = journalByModule(out);
  EXPECT_EQ(journal["sub/m0"]["status"], "ok") << journal["sub/m0"];
  EXPECT_EQ(journal["m1"]["status"], "ok") << journal["m1"];
  expectElsewhereUntouched();
}

// The state directory (lock, work directories) planted as a link: refused,
// naming it, before the lock is taken or anything is written there.
TEST_F(HarvestSymlink, AStateDirectoryPlantedAsALinkIsRefused) {
  std::string out = Work / "planted-state";
  fs::create_directories(out);
  fs::create_directory_symlink(Elsewhere, out + "/.mlgo-harvest");
  CommandResult r = run(harvestCommand(nestedCorpus(), out, HarvestFlags));
  EXPECT_NE(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find(out + "/.mlgo-harvest: a symbolic link below " + out), std::string::npos) << r.Err;
  expectElsewhereUntouched();
}

// merge-harvest reads shards written elsewhere: a shard whose logs/sub is a
// link is refused, naming it, and nothing is merged (the reproduction copied
// Elsewhere's m0.log into the merged output).
TEST_F(HarvestSymlink, MergeRefusesAShardWithALinkInLogs) {
  std::string shard = harvestCopy("shard");
  plantLink(shard);
  std::string merged = Work / "merged";
  CommandResult r = run(tool("merge-harvest") + " --corpus=" + quote(nestedCorpus()) +
                        " --output_dir=" + quote(merged) + " " + quote(shard));
  EXPECT_NE(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find(shard + "/logs/sub: a symbolic link below " + shard), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(merged + "/logs/sub/m0.log"));
  expectElsewhereUntouched();
}

// compare-harvests reads each module's sites file: through a link it is a
// problem named in the report, not a file read.
TEST_F(HarvestSymlink, CompareHarvestsReportsALinkInsteadOfReadingThroughIt) {
  std::string a = harvestCopy("a"), b = harvestCopy("b");
  // Elsewhere holds B's own sites file: a reader following the link would
  // find a valid one and say nothing.
  fs::copy_file(b + "/logs/sub/m0.sites.jsonl", Elsewhere + "/m0.sites.jsonl", fs::copy_options::overwrite_existing);
  fs::copy_file(b + "/logs/sub/m0.log", Elsewhere + "/m0.log", fs::copy_options::overwrite_existing);
  plantLink(b);
  std::string json = Work / "compare.json";
  CommandResult r = run(tool("compare-harvests") + " " + quote(a) + " " + quote(b) + " --json=" + quote(json));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json report = nlohmann::json::parse(readFile(json));
  bool named = false;
  for (const nlohmann::json &problem : report["sites_problems"])
    named |= problem["side"] == "b" && problem["module"] == "sub/m0" &&
             problem["error"].get<std::string>().find(b + "/logs/sub: a symbolic link below " + b) != std::string::npos;
  EXPECT_TRUE(named) << report["sites_problems"];
}

// A module's log planted as a link to another valid log outside OUT (here a
// copy of its own, so that nothing else gives it away): the resume names
// it instead of counting it as the module's log, and `training-log
// trajectories` refuses it instead of taking it as that module's trajectory.
TEST_F(HarvestSymlink, ALogPlantedAsALinkIsNeverTakenAsTheModulesLog) {
  std::string out = harvestCopy("out");
  fs::copy_file(out + "/logs/m1.log", Elsewhere + "/m1.log");
  fs::remove(out + "/logs/m1.log");
  fs::create_symlink(Elsewhere + "/m1.log", out + "/logs/m1.log");
  CommandResult trajectories = run(tool("training-log") + " trajectories " + quote(out));
  EXPECT_NE(trajectories.ExitCode, 0) << trajectories.Out;
  EXPECT_NE(trajectories.Err.find(out + "/logs/m1.log: a symbolic link below " + out), std::string::npos)
      << trajectories.Err;
  CommandResult resumed = run(harvestCommand(nestedCorpus(), out, HarvestFlags));
  EXPECT_NE(resumed.ExitCode, 0) << resumed.Err;
  EXPECT_NE(resumed.Err.find(out + "/logs/m1.log: a symbolic link below " + out), std::string::npos) << resumed.Err;
  EXPECT_TRUE(fs::is_symlink(out + "/logs/m1.log"));
}

// OUT/explore planted as a link: the exploration's rounds (journals, logs,
// work directories, the baseline cache) never go there; the run stops
// naming it.
TEST_F(HarvestSymlink, AnExploreDirectoryPlantedAsALinkIsRefused) {
  std::string out = Work / "planted-explore";
  fs::create_directories(out);
  fs::create_directory_symlink(Elsewhere, out + "/explore");
  CommandResult r = run(harvestCommand(nestedCorpus(), out, HarvestFlags + " --explore=1 --explore_order=first"));
  EXPECT_NE(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find(out + "/explore: a symbolic link below " + out), std::string::npos) << r.Err;
  expectElsewhereUntouched();
}

// OUT/policies planted as a link: no policy's harvest goes there.
TEST_F(HarvestSymlink, APoliciesDirectoryPlantedAsALinkIsRefused) {
  std::string out = Work / "planted-policies";
  fs::create_directories(out);
  fs::create_directory_symlink(Elsewhere, out + "/policies");
  CommandResult r = run(harvestCommand(nestedCorpus(), out, HarvestFlags + " --policies=default,random:0.5:1"));
  EXPECT_NE(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find(out + "/policies: a symbolic link below " + out), std::string::npos) << r.Err;
  expectElsewhereUntouched();
}

// The Python package's Harvest reads logs and sites files as the tools do.
TEST_F(HarvestSymlink, PythonHarvestRefusesALinkInLogs) {
  if (!HavePackage)
    GTEST_SKIP() << "the Python package is not built";
  std::string h = harvestCopy("py");
  fs::copy_file(h + "/logs/sub/m0.sites.jsonl", Elsewhere + "/m0.sites.jsonl", fs::copy_options::overwrite_existing);
  fs::copy_file(h + "/logs/sub/m0.log", Elsewhere + "/m0.log", fs::copy_options::overwrite_existing);
  plantLink(h);
  CommandResult r = run("env PYTHONPATH=" + quote(PackageDir) + " " + quote(Python3) + " " +
                        quote(std::string(MLGO_SOURCE_DIR) + "/tests/python/check_beneath.py") + " " + quote(h));
  EXPECT_EQ(r.ExitCode, 0) << r.Out << r.Err;
}

// A shared baseline cache whose fan-out directories are links (whoever may
// write the cache can plant 00..ff): each is skipped with a warning, no entry
// or temporary is written through it, and the harvest's sizes are right.
TEST_F(HarvestSymlink, BaselineCacheSkipsALinkedFanOutDirectory) {
  std::string cache = Work / "cache", away = Work / "away";
  fs::create_directories(cache);
  fs::create_directories(away);
  const char *hex = "0123456789abcdef";
  for (int i = 0; i < 256; ++i)
    fs::create_directory_symlink(away, cache + "/" + std::string{hex[i / 16], hex[i % 16]});
  std::string policy = " --policy=random:0.5:3 --num_workers=1";
  std::string plain = Work / "plain", cached = Work / "cached";
  mustRun(harvestCommand(nestedCorpus(), plain, policy));
  CommandResult r = run(harvestCommand(nestedCorpus(), cached, policy + " --baseline_cache=" + quote(cache)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find(": a symbolic link below " + cache), std::string::npos) << r.Err;
  EXPECT_TRUE(listTree(away, /*includeHidden=*/true).empty()) << "written through a linked fan-out directory";
  auto want = journalByModule(plain), got = journalByModule(cached);
  ASSERT_EQ(got.size(), 2u);
  for (const auto &[module, record] : want) {
    EXPECT_EQ(got[module]["status"], "ok") << got[module];
    EXPECT_EQ(got[module]["default_size"], record["default_size"]) << module;
    EXPECT_EQ(got[module]["native_size"], record["native_size"]) << module;
  }
}

} // namespace
