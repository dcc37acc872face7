// The shared JSON Lines journal (torn lines, options, append errors) and the
// atomic-file paths that a default build never takes (named-temp staging,
// rollback), run on purpose.
#include "mlgo/extract/Journal.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/JsonLinesJournal.h"

#include "support/TestSupport.h"

#include <algorithm>
#include <set>
#include <sys/stat.h>
#include <thread>

using namespace mlgo;
using namespace mlgo::test;

namespace {

const nlohmann::ordered_json Options = {{"cmd_filter", "^-O2$"}, {"thinlto_build", "none"}};

TEST(Journal, HeaderRecordsAndExtractRoundTrip) {
  TempDir dir;
  ModuleOutcome a;
  a.Input = "/x/a.o";
  a.Name = "a.o";
  a.Status = ModuleStatus::Ok;
  a.InputSize = 42;
  a.InputMtimeNs = 1234567890123;
  ModuleOutcome b = a;
  b.Input = "/x/b.o";
  b.Status = ModuleStatus::Failed;
  b.Reason = "invalid_bitcode";
  {
    JournalAppender w;
    ASSERT_FALSE(static_cast<bool>(w.open(dir / "j", true, Options)));
    ASSERT_FALSE(static_cast<bool>(w.append(journalRecord(a))));
    ASSERT_FALSE(static_cast<bool>(w.append(journalRecord(b))));
  }
  auto contents = readJournalFile(dir / "j");
  ASSERT_TRUE(static_cast<bool>(contents)) << llvm::toString(contents.takeError());
  ASSERT_TRUE(contents->Options.has_value());
  EXPECT_EQ(*contents->Options, Options);
  EXPECT_FALSE(contents->TornTail);
  auto records = outcomesFromJournal(contents->Records);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].Input, "/x/a.o");
  EXPECT_EQ(records[0].InputMtimeNs, 1234567890123);
  EXPECT_EQ(records[1].Reason, "invalid_bitcode");
  auto missing = readJournalFile(dir / "missing");
  ASSERT_TRUE(static_cast<bool>(missing));
  EXPECT_TRUE(missing->Records.empty());
  EXPECT_FALSE(missing->Options.has_value());
}

// A killed append leaves a torn last line: the reader skips exactly it, and
// the next run's first record does not get glued onto it.
TEST(Journal, TornFinalLineIsSkippedAndCutBeforeAppending) {
  TempDir dir;
  {
    JournalAppender w;
    ASSERT_FALSE(static_cast<bool>(w.open(dir / "j", true, Options)));
    ASSERT_FALSE(static_cast<bool>(w.append({{"module", "a"}, {"status", "ok"}})));
  }
  writeFile(dir / "j", readFile(dir / "j") + "{\"module\": \"b\", \"sta"); // killed mid-write
  auto torn = readJournalFile(dir / "j");
  ASSERT_TRUE(static_cast<bool>(torn)) << llvm::toString(torn.takeError());
  EXPECT_TRUE(torn->TornTail);
  ASSERT_EQ(torn->Records.size(), 1u);
  EXPECT_EQ(torn->Records[0]["module"], "a");
  {
    JournalAppender w;
    ASSERT_FALSE(static_cast<bool>(w.open(dir / "j", false, Options)));
    ASSERT_FALSE(static_cast<bool>(w.append({{"module", "c"}, {"status", "ok"}})));
  }
  auto resumed = readJournalFile(dir / "j");
  ASSERT_TRUE(static_cast<bool>(resumed)) << llvm::toString(resumed.takeError());
  EXPECT_FALSE(resumed->TornTail);
  ASSERT_EQ(resumed->Records.size(), 2u);
  EXPECT_EQ(resumed->Records[1]["module"], "c");
}

// Only the final line may be torn: damage elsewhere is an error naming the line.
TEST(Journal, DamageBeforeTheLastLineIsAnError) {
  TempDir dir;
  writeFile(dir / "j", "{\"options\": {}}\n{\"module\": \"a\"}\n{\"modu\n{\"module\": \"b\"}\n");
  auto contents = readJournalFile(dir / "j");
  ASSERT_FALSE(static_cast<bool>(contents));
  std::string message = llvm::toString(contents.takeError());
  EXPECT_NE(message.find(dir / "j"), std::string::npos) << message;
  EXPECT_NE(message.find("line 3"), std::string::npos) << message;
}

TEST(Journal, LatestPerKeyKeepsFirstAppearanceOrder) {
  std::vector<nlohmann::ordered_json> records = {
      {{"module", "a"}, {"v", 1}}, {{"module", "b"}, {"v", 1}}, {{"other", 1}}, {{"module", "a"}, {"v", 2}}};
  auto latest = latestPerKey(records, "module");
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0]["module"], "a");
  EXPECT_EQ(latest[0]["v"], 2);
  EXPECT_EQ(latest[1]["module"], "b");
}

TEST(Journal, OptionsMismatchNamesEachOption) {
  JournalContents journal;
  journal.Options = Options;
  journal.Records.push_back({{"module", "a"}});
  EXPECT_FALSE(static_cast<bool>(checkJournalOptions(journal, Options, "j", "")));
  nlohmann::ordered_json changed = Options;
  changed["cmd_filter"] = "^-O3$";
  changed["policy"] = "default";
  llvm::Error e = checkJournalOptions(journal, changed, "OUT/j", "Start over.");
  ASSERT_TRUE(static_cast<bool>(e));
  std::string message = llvm::toString(std::move(e));
  EXPECT_NE(message.find("OUT/j"), std::string::npos) << message;
  EXPECT_NE(message.find("--cmd_filter was \"^-O2$\", now \"^-O3$\""), std::string::npos) << message;
  EXPECT_NE(message.find("--policy was (none)"), std::string::npos) << message;
  EXPECT_EQ(message.find("thinlto_build"), std::string::npos) << message;
  EXPECT_NE(message.find("Start over."), std::string::npos) << message;
  // A journal with records but no options (older version) is not resumed either.
  journal.Options.reset();
  EXPECT_TRUE(static_cast<bool>(checkJournalOptions(journal, Options, "j", "")));
  llvm::consumeError(checkJournalOptions(journal, Options, "j", ""));
  // An empty journal resumes nothing and conflicts with nothing.
  EXPECT_FALSE(static_cast<bool>(checkJournalOptions(JournalContents{}, Options, "j", "")));
}

// A failed append (here: a full device) is reported, and every later one too.
TEST(Journal, AppendErrorsAreReported) {
  if (!exists("/dev/full"))
    GTEST_SKIP() << "no /dev/full";
  JournalAppender w;
  llvm::Error e = w.open("/dev/full", false, Options); // the header line fails
  ASSERT_TRUE(static_cast<bool>(e));
  std::string message = llvm::toString(std::move(e));
  EXPECT_NE(message.find("/dev/full"), std::string::npos) << message;
  EXPECT_NE(message.find("No space left"), std::string::npos) << message;
  llvm::Error again = w.append({{"module", "a"}});
  ASSERT_TRUE(static_cast<bool>(again));
  llvm::consumeError(std::move(again));
}

// Group commit: lines are held until a batch is full (then written after one
// syncfs), and close() writes what is held; concurrent appends lose nothing.
TEST(Journal, GroupCommitWritesWholeBatchesAndCloseWritesTheRest) {
  TempDir dir;
  std::string path = dir / "j.jsonl";
  auto lines = [&] {
    std::string text = readFile(path);
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  };
  {
    JournalAppender w;
    ASSERT_FALSE(static_cast<bool>(w.open(path, true, Options)));
    w.setGroupCommit(3);
    ASSERT_FALSE(static_cast<bool>(w.append({{"module", "a"}})));
    ASSERT_FALSE(static_cast<bool>(w.append({{"module", "b"}})));
    EXPECT_EQ(lines(), 1u); // the options header only: a and b are held
    ASSERT_FALSE(static_cast<bool>(w.append({{"module", "c"}})));
    EXPECT_EQ(lines(), 4u); // the batch is full: written
    ASSERT_FALSE(static_cast<bool>(w.append({{"module", "d"}})));
    EXPECT_EQ(lines(), 4u);
    ASSERT_FALSE(static_cast<bool>(w.close()));
    EXPECT_EQ(lines(), 5u);
  }
  auto contents = readJournalFile(path);
  ASSERT_TRUE(static_cast<bool>(contents)) << llvm::toString(contents.takeError());
  ASSERT_EQ(contents->Records.size(), 4u);
  EXPECT_EQ(contents->Records[3]["module"], "d");

  JournalAppender w;
  ASSERT_FALSE(static_cast<bool>(w.open(path, true, Options)));
  w.setGroupCommit(7);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&w, t] {
      for (int i = 0; i < 100; ++i)
        llvm::consumeError(w.append({{"module", std::to_string(t) + "." + std::to_string(i)}}));
    });
  for (std::thread &thread : threads)
    thread.join();
  ASSERT_FALSE(static_cast<bool>(w.close()));
  contents = readJournalFile(path);
  ASSERT_TRUE(static_cast<bool>(contents)) << llvm::toString(contents.takeError());
  std::set<std::string> modules;
  for (const auto &record : contents->Records)
    modules.insert(record["module"].get<std::string>());
  EXPECT_EQ(contents->Records.size(), 400u);
  EXPECT_EQ(modules.size(), 400u);
}

// Both staging paths: O_TMPFILE (the default here) and named temporary files
// (file systems without O_TMPFILE, or no /proc).
class StagedFilesPaths : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override { setUnnamedFilesEnabled(GetParam()); }
  void TearDown() override { setUnnamedFilesEnabled(true); }
};

TEST_P(StagedFilesPaths, AppearTogetherOrNotAtAll) {
  TempDir dir;
  writeFile(dir / "stage/.keep", "");
  {
    StagedFiles files(dir / "stage");
    ASSERT_FALSE(static_cast<bool>(files.add(dir / "out/m.bc", "bc")));
    ASSERT_FALSE(static_cast<bool>(files.add(dir / "out/m.cmd", "cmd", 0600)));
    EXPECT_FALSE(exists(dir / "out/m.bc")); // nothing visible before commit
    EXPECT_EQ(listTree(dir / "out"), std::set<std::string>{});
    // The named-temp path stages in the staging directory; O_TMPFILE leaves no name.
    EXPECT_EQ(listTree(dir / "stage", true).size(), GetParam() ? 1u : 3u);
    ASSERT_FALSE(static_cast<bool>(files.commit()));
  }
  EXPECT_EQ(readFile(dir / "out/m.bc"), "bc");
  EXPECT_EQ(readFile(dir / "out/m.cmd"), "cmd");
  struct stat st;
  ASSERT_EQ(::stat((dir / "out/m.cmd").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  {
    StagedFiles replaced(dir / "stage");
    ASSERT_FALSE(static_cast<bool>(replaced.add(dir / "out/m.bc", "bc2")));
    ASSERT_FALSE(static_cast<bool>(replaced.commit()));
  }
  EXPECT_EQ(readFile(dir / "out/m.bc"), "bc2");
  {
    StagedFiles abandoned(dir / "stage");
    ASSERT_FALSE(static_cast<bool>(abandoned.add(dir / "out/n.bc", "bc")));
  }
  EXPECT_FALSE(exists(dir / "out/n.bc"));
  EXPECT_EQ(listTree(dir / "stage", true), (std::set<std::string>{".keep"}));
  EXPECT_EQ(listTree(dir / "out", true), (std::set<std::string>{"m.bc", "m.cmd"})); // no temporaries or backups
}

// A commit that fails half-way undoes what it made visible: a new name is
// removed, and a file it replaced gets its older version back.
TEST_P(StagedFilesPaths, FailedCommitRollsBackOnlyWhatItDid) {
  TempDir dir;
  writeFile(dir / "stage/.keep", "");
  writeFile(dir / "out/m.cmd", "old cmd");                          // a good older version
  ASSERT_TRUE(std::filesystem::create_directory(dir / "out/m.bc")); // the last rename fails: EISDIR
  {
    StagedFiles files(dir / "stage");
    ASSERT_FALSE(static_cast<bool>(files.add(dir / "out/m.cmd", "new cmd")));
    ASSERT_FALSE(static_cast<bool>(files.add(dir / "out/m.thinlto.bc", "index")));
    ASSERT_FALSE(static_cast<bool>(files.add(dir / "out/m.bc", "bc")));
    llvm::Error e = files.commit();
    ASSERT_TRUE(static_cast<bool>(e));
    EXPECT_NE(llvm::toString(std::move(e)).find("out/m.bc"), std::string::npos);
  }
  EXPECT_EQ(readFile(dir / "out/m.cmd"), "old cmd");
  EXPECT_FALSE(exists(dir / "out/m.thinlto.bc"));
  EXPECT_EQ(listTree(dir / "out", true), (std::set<std::string>{"m.bc/", "m.cmd"}));
  EXPECT_EQ(listTree(dir / "stage", true), (std::set<std::string>{".keep"}));
}

INSTANTIATE_TEST_SUITE_P(AtomicFile, StagedFilesPaths, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "UnnamedFiles" : "NamedTemporaries";
                         });

TEST(AtomicFile, StreamedFileAppearsOnlyOnCommit) {
  TempDir dir;
  writeFile(dir / "d.tfrecord", "older");
  {
    AtomicFileWriter w;
    ASSERT_FALSE(static_cast<bool>(w.open(dir / "d.tfrecord")));
    ASSERT_FALSE(static_cast<bool>(w.write("abc")));
    ASSERT_FALSE(static_cast<bool>(w.write("def")));
    EXPECT_EQ(readFile(dir / "d.tfrecord"), "older");
    EXPECT_EQ(w.bytesWritten(), 6u);
    ASSERT_FALSE(static_cast<bool>(w.commit()));
  }
  EXPECT_EQ(readFile(dir / "d.tfrecord"), "abcdef");
  {
    AtomicFileWriter abandoned;
    ASSERT_FALSE(static_cast<bool>(abandoned.open(dir / "d.tfrecord")));
    ASSERT_FALSE(static_cast<bool>(abandoned.write("x")));
  }
  EXPECT_EQ(readFile(dir / "d.tfrecord"), "abcdef");
  EXPECT_EQ(listTree(dir.path(), true), (std::set<std::string>{"d.tfrecord"}));
}

} // namespace
