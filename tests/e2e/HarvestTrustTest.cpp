// A corpus is data from someone else (docs/security.md, issue 20 #1): a .cmd
// that loads a plugin or writes a user's file is refused by harvest-logs and
// reported by validate-corpus; with --trust_corpus_commands it runs, but
// Landlock keeps every write inside the module's work directory. An
// ordinary clang-22 corpus (-g -MD -ftime-trace --coverage -gsplit-dwarf)
// still harvests in every mode. Real clang-22 throughout.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include "mlgo/support/Landlock.h"

#include <nlohmann/json.hpp>

#include <filesystem>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

class HarvestTrust : public ::testing::Test {
protected:
  void SetUp() override {
    // A plugin whose constructor leaves a marker: proof that clang loaded it.
    writeFile(Work / "evil.c", "#include <stdio.h>\n__attribute__((constructor)) static void pwn(void) {\n"
                               "  FILE *f = fopen(\"" +
                                   Marker + "\", \"w\");\n  if (f) { fputs(\"pwned\\n\", f); fclose(f); }\n}\n");
    mustRun(std::string(MLGO_CLANG) + " -shared -fPIC -o " + quote(Evil) + " " + quote(Work / "evil.c"));
    writeFile(Victim, "the user's file\n");
    Corpus = makeEmbeddedBitcodeCorpus(
        Work.path(),
        {{"load", inlinerSource(20, 20)}, {"stats", inlinerSource(21, 21)}, {"plain", inlinerSource(22, 22)}},
        "-Oz -g -MD -ftime-trace --coverage -gsplit-dwarf", ObjectListing::CompileCommands);
    appendToCmd("load", {"-load", Evil});
    appendToCmd("stats", {"-stats-file=" + Victim});
  }

  std::string cmdOf(const std::string &stem) {
    for (const auto &entry : fs::recursive_directory_iterator(Corpus))
      if (entry.path().extension() == ".cmd" && entry.path().stem().string().find(stem) == 0)
        return entry.path().string();
    ADD_FAILURE() << "no .cmd for " << stem;
    return "";
  }
  void appendToCmd(const std::string &stem, const std::vector<std::string> &args) {
    std::string path = cmdOf(stem), bytes = readFile(path);
    for (const std::string &a : args)
      bytes += a + std::string(1, '\0');
    writeFile(path, bytes);
  }
  static std::string moduleOf(const std::map<std::string, nlohmann::json> &journal, const std::string &stem) {
    for (const auto &[name, record] : journal)
      if (fs::path(name).filename().string().find(stem) == 0)
        return name;
    return "";
  }

  TempDir Work;
  std::string Evil = Work / "libevil.so", Marker = Work / "marker", Victim = Work / "victim.txt", Corpus;
};

TEST_F(HarvestTrust, CodeLoadingAndFileWritingCmdsAreRefusedAndReported) {
  std::string out = Work / "out";
  CommandResult r = run(harvestCommand(Corpus, out, "--compiler=clang --mode=interactive"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto journal = journalByModule(out);
  ASSERT_EQ(journal.size(), 3u);
  nlohmann::json load = journal[moduleOf(journal, "load")], stats = journal[moduleOf(journal, "stats")];
  EXPECT_EQ(load["status"], "failed");
  EXPECT_EQ(load["reason"], "unsafe_command_line");
  EXPECT_NE(load["detail"].get<std::string>().find("-load"), std::string::npos) << load;
  EXPECT_EQ(stats["reason"], "unsafe_command_line");
  EXPECT_NE(stats["detail"].get<std::string>().find("-stats-file="), std::string::npos) << stats;
  EXPECT_EQ(journal[moduleOf(journal, "plain")]["status"], "ok") << journal[moduleOf(journal, "plain")];
  EXPECT_FALSE(exists(Marker));
  EXPECT_EQ(readFile(Victim), "the user's file\n");
  std::string formats = std::string(MLGO_SOURCE_DIR) + "/corpus_formats/";
  std::string check = "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " ";
  mustRun(check + "--lines " + quote(formats + "harvest_journal.schema.json") + " " + quote(out + "/harvest.jsonl"));
  mustRun(check + quote(formats + "harvest_summary.schema.json") + " " + quote(out + "/summary.json"));

  CommandResult v = run(tool("validate-corpus") + " --json " + quote(Corpus));
  EXPECT_EQ(v.ExitCode, 1) << v.Out << v.Err;
  auto report = nlohmann::json::parse(v.Out);
  std::set<std::string> flagged;
  for (const auto &p : report["problems"])
    if (p["code"] == "unsafe_command_line")
      flagged.insert(p["detail"].get<std::string>().find("-load") != std::string::npos          ? "load"
                     : p["detail"].get<std::string>().find("-stats-file=") != std::string::npos ? "stats"
                                                                                                : p.dump());
  EXPECT_EQ(flagged, (std::set<std::string>{"load", "stats"})) << v.Out;
  writeFile(Work / "v.json", v.Out);
  mustRun(check + quote(formats + "validate_corpus.schema.json") + " " + quote(Work / "v.json"));
}

TEST_F(HarvestTrust, TrustedCommandsRunButLandlockKeepsWritesInTheWorkDirectory) {
  if (mlgo::landlockSupport().Abi < 1)
    GTEST_SKIP() << "no Landlock: " << mlgo::landlockSupport().Problem;
  std::string out = Work / "trusted";
  CommandResult r = run(harvestCommand(Corpus, out, "--compiler=clang --mode=interactive --trust_corpus_commands"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto journal = journalByModule(out);
  ASSERT_EQ(journal.size(), 3u);
  for (const auto &[name, record] : journal)
    EXPECT_NE(record["reason"], "unsafe_command_line") << record; // not screened
  // The plugin was not loaded (outside what a compile may read; had it run,
  // it could not have written its marker outside the work directory either:
  // HarvestConfinementTest.cpp); -stats-file could not overwrite.
  EXPECT_FALSE(exists(Marker));
  EXPECT_EQ(readFile(Victim), "the user's file\n");
  auto summary = harvestSummary(out);
  EXPECT_EQ(summary["confinement"]["active"], true) << summary;
  EXPECT_EQ(summary["confinement"]["landlock_abi"], mlgo::landlockSupport().Abi);
}

TEST_F(HarvestTrust, AnOrdinaryCorpusHarvestsInEveryModeConfined) {
  for (const std::string &flags :
       {std::string("--compiler=clang --mode=interactive"), std::string("--compiler=clang --mode=plugin"),
        std::string("--mode=interactive"), std::string("--mode=plugin"),
        std::string("--problem=regalloc-evict --policy=random:0.5:1"),
        std::string("--problem=regalloc-priority --policy=random:1:3")}) {
    std::string out = Work / ("out" + std::to_string(std::hash<std::string>{}(flags)));
    CommandResult r = run(harvestCommand(Corpus, out, flags + " --modules_filter=.*plain"));
    ASSERT_EQ(r.ExitCode, 0) << flags << "\n" << r.Err;
    auto journal = journalByModule(out);
    ASSERT_EQ(journal.size(), 1u) << flags;
    EXPECT_EQ(journal.begin()->second["status"], "ok") << flags << ": " << journal.begin()->second;
    if (flags.find("regalloc") == std::string::npos) { // a small module may have no eviction
      EXPECT_GT(journal.begin()->second["decisions"].get<int>(), 0) << flags;
    }
    auto summary = harvestSummary(out);
    EXPECT_EQ(summary["confinement"]["active"], mlgo::landlockSupport().Abi > 0) << flags;
  }
}

} // namespace
