// Which syncs the library makes and in which order with the writes they
// protect, observed through the sync hook: a missing or late sync loses data
// only at a power loss, which no other test can stage. Each expectation
// below fails if its sync is removed or moved after the write it protects.
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/MoveFile.h"

#include "support/SyncRecorder.h"
#include "support/TestSupport.h"

#include <algorithm>
#include <filesystem>
#include <sys/stat.h>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const nlohmann::ordered_json Options = {{"flag", 1}};

size_t lineCount(const std::string &path) {
  std::string text = readFile(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The contents of `path`, or "(absent)".
std::string contentsOrAbsent(const std::string &path) { return exists(path) ? readFile(path) : "(absent)"; }

class Durability : public ::testing::Test {
protected:
  void SetUp() override {
    setDurableWrites(true);
    setSyncDeferred(false);
  }
  void TearDown() override {
    setDurableWrites(true);
    setSyncDeferred(false);
  }
  TempDir Dir;
};

// Group commit: a batch's lines are written only after one syncfs (made
// while none of them is in the journal yet); close() commits the rest the
// same way, then syncs the journal itself once its last line is in.
TEST_F(Durability, GroupCommitSyncsTheFileSystemBeforeEachBatchIsWritten) {
  std::string path = Dir / "j.jsonl";
  SyncRecorder syncs;
  syncs.Observe = [&](const SyncEvent &) { return std::to_string(lineCount(path)) + " lines"; };
  JournalAppender w;
  ASSERT_FALSE(static_cast<bool>(w.open(path, true, Options)));
  w.setGroupCommit(3);
  for (const char *module : {"a", "b", "c", "d", "e"})
    ASSERT_FALSE(static_cast<bool>(w.append({{"module", module}})));
  ASSERT_FALSE(static_cast<bool>(w.close()));
  std::vector<SyncEvent> events = syncs.events();
  ASSERT_EQ(events.size(), 3u) << describe(events);
  // The header only: a, b and c are not written before their syncfs.
  EXPECT_EQ(events[0].Call, SyncCall::Syncfs) << describe(events);
  EXPECT_EQ(events[0].Path, path);
  EXPECT_EQ(events[0].Snapshot, "1 lines") << describe(events);
  // close(): d and e are held, then synced, then written.
  EXPECT_EQ(events[1].Call, SyncCall::Syncfs) << describe(events);
  EXPECT_EQ(events[1].Snapshot, "4 lines") << describe(events);
  EXPECT_EQ(events[2].Call, SyncCall::Fdatasync) << describe(events);
  EXPECT_EQ(events[2].Path, path);
  EXPECT_EQ(events[2].Snapshot, "6 lines") << describe(events);
  EXPECT_EQ(lineCount(path), 6u);
}

// Without group commit no line waits for a sync; close() syncs the journal.
TEST_F(Durability, PlainAppendsSyncTheJournalOnceAtClose) {
  std::string path = Dir / "j.jsonl";
  SyncRecorder syncs;
  syncs.Observe = [&](const SyncEvent &) { return std::to_string(lineCount(path)) + " lines"; };
  JournalAppender w;
  ASSERT_FALSE(static_cast<bool>(w.open(path, true, Options)));
  ASSERT_FALSE(static_cast<bool>(w.append({{"module", "a"}})));
  ASSERT_FALSE(static_cast<bool>(w.append({{"module", "b"}})));
  EXPECT_EQ(syncs.events().size(), 0u) << describe(syncs.events());
  ASSERT_FALSE(static_cast<bool>(w.close()));
  std::vector<SyncEvent> events = syncs.events();
  ASSERT_EQ(events.size(), 1u) << describe(events);
  EXPECT_EQ(events[0].Call, SyncCall::Fdatasync);
  EXPECT_EQ(events[0].Snapshot, "3 lines");
}

// A syncfs that fails (an I/O error) writes none of the batch's lines: they
// would name files that may not be on disk. The error names the journal, and
// every later append and close() fail with it.
TEST_F(Durability, AFailedGroupSyncWritesNoneOfTheBatch) {
  std::string path = Dir / "j.jsonl";
  SyncRecorder syncs;
  syncs.FailWith = EIO;
  JournalAppender w;
  ASSERT_FALSE(static_cast<bool>(w.open(path, true, Options)));
  w.setGroupCommit(2);
  ASSERT_FALSE(static_cast<bool>(w.append({{"module", "a"}})));
  llvm::Error e = w.append({{"module", "b"}});
  ASSERT_TRUE(static_cast<bool>(e));
  std::string message = llvm::toString(std::move(e));
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("Input/output error"), std::string::npos) << message;
  EXPECT_EQ(lineCount(path), 1u) << readFile(path);
  llvm::Error later = w.append({{"module", "c"}});
  EXPECT_TRUE(static_cast<bool>(later));
  llvm::consumeError(std::move(later));
  llvm::Error closed = w.close();
  EXPECT_TRUE(static_cast<bool>(closed));
  llvm::consumeError(std::move(closed));
  EXPECT_EQ(lineCount(path), 1u) << readFile(path);
}

// A whole file written atomically: its data is synced under the temporary
// name (the old version still in place), then renamed, then its directory
// synced (the new version in place).
TEST_F(Durability, AtomicWritesSyncTheFileBeforeItsRenameAndTheDirectoryAfter) {
  std::string final = Dir / "report.json";
  writeFile(final, "old");
  SyncRecorder syncs;
  syncs.Observe = [&](const SyncEvent &) { return contentsOrAbsent(final); };
  ASSERT_FALSE(static_cast<bool>(writeFileAtomically(final, "new")));
  std::vector<SyncEvent> events = syncs.events();
  ASSERT_EQ(events.size(), 2u) << describe(events);
  EXPECT_EQ(events[0].Call, SyncCall::Fdatasync) << describe(events);
  EXPECT_NE(events[0].Path, final);
  EXPECT_EQ(events[0].Path.rfind(final + ".tmp.", 0), 0u) << describe(events);
  EXPECT_EQ(events[0].Snapshot, "old") << describe(events);
  EXPECT_EQ(events[1].Call, SyncCall::Fsync) << describe(events);
  EXPECT_TRUE(events[1].Directory) << describe(events);
  EXPECT_EQ(events[1].Path, Dir.path());
  EXPECT_EQ(events[1].Snapshot, "new") << describe(events);

  // The streamed writer: the same order.
  syncs.clear();
  {
    AtomicFileWriter writer;
    ASSERT_FALSE(static_cast<bool>(writer.open(final)));
    ASSERT_FALSE(static_cast<bool>(writer.write("streamed")));
    EXPECT_EQ(syncs.events().size(), 0u) << describe(syncs.events());
    ASSERT_FALSE(static_cast<bool>(writer.commit()));
  }
  events = syncs.events();
  ASSERT_EQ(events.size(), 2u) << describe(events);
  EXPECT_EQ(events[0].Call, SyncCall::Fdatasync);
  EXPECT_EQ(events[0].Snapshot, "new") << describe(events);
  EXPECT_EQ(events[1].Call, SyncCall::Fsync);
  EXPECT_TRUE(events[1].Directory);
  EXPECT_EQ(events[1].Snapshot, "streamed") << describe(events);
}

// A module's files: each is synced before it gets its name, a new directory's
// name is synced in its parent, and the directory holding the names is
// synced once all of them are in place. Both staging paths.
class StagedFilesSyncs : public Durability, public ::testing::WithParamInterface<bool> {
protected:
  void SetUp() override {
    Durability::SetUp();
    setUnnamedFilesEnabled(GetParam());
  }
  void TearDown() override {
    setUnnamedFilesEnabled(true);
    Durability::TearDown();
  }
};

TEST_P(StagedFilesSyncs, EachFileBeforeItsNameAndTheDirectoryAfterAll) {
  writeFile(Dir / "stage/.keep", "");
  std::string out = Dir / "out/sub";
  SyncRecorder syncs;
  syncs.Observe = [&](const SyncEvent &) {
    return contentsOrAbsent(out + "/m.bc") + "," + contentsOrAbsent(out + "/m.cmd");
  };
  {
    StagedFiles files(Dir / "stage");
    ASSERT_FALSE(static_cast<bool>(files.add(out + "/m.bc", "bc")));
    ASSERT_FALSE(static_cast<bool>(files.add(out + "/m.cmd", "cmd")));
    ASSERT_FALSE(static_cast<bool>(files.commit()));
  }
  std::vector<SyncEvent> events = syncs.events();
  std::string all = describe(events);
  size_t fileSyncs = 0;
  for (const SyncEvent &e : events) {
    if (e.Call != SyncCall::Fdatasync)
      continue;
    ++fileSyncs;
    // An unnamed file is synced (under its final name) before it is linked;
    // a named temporary one when it is written, before the commit.
    std::string bc = e.Snapshot.substr(0, e.Snapshot.find(',')), cmd = e.Snapshot.substr(e.Snapshot.find(',') + 1);
    if (e.Path == out + "/m.bc")
      EXPECT_EQ(bc, "(absent)") << "m.bc synced after it got its name\n" << all;
    else if (e.Path == out + "/m.cmd")
      EXPECT_EQ(cmd, "(absent)") << "m.cmd synced after it got its name\n" << all;
    else
      EXPECT_EQ(e.Snapshot, "(absent),(absent)") << "a staged file synced after the commit began\n" << all;
  }
  EXPECT_EQ(fileSyncs, 2u) << all;
  // out/ and out/sub/ were made: their names are synced in their parents.
  for (const std::string &parent : {Dir.path(), Dir / "out"})
    EXPECT_TRUE(
        std::any_of(events.begin(), events.end(), [&](const SyncEvent &e) { return e.Directory && e.Path == parent; }))
        << parent << "\n"
        << all;
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.back().Directory) << all;
  EXPECT_EQ(events.back().Path, out) << all;
  EXPECT_EQ(events.back().Snapshot, "bc,cmd") << all;
  EXPECT_EQ(std::count_if(events.begin(), events.end(), [&](const SyncEvent &e) { return e.Path == out; }), 1)
      << "the module's directory is synced once, after both names\n"
      << all;
}

INSTANTIATE_TEST_SUITE_P(AtomicFile, StagedFilesSyncs, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "UnnamedFiles" : "NamedTemporaries";
                         });

// A file moved from another file system (a --explicit_temps_dir on a tmpfs)
// is copied: the copy is synced before it replaces anything.
TEST_F(Durability, ACopyAcrossFileSystemsIsSyncedBeforeItsRename) {
  std::string shm = "/dev/shm/mlgo-sync-" + std::to_string(::getpid());
  struct stat a {
  }, b{};
  if (::mkdir(shm.c_str(), 0700) != 0 || ::stat(shm.c_str(), &a) != 0 || ::stat(Dir.path().c_str(), &b) != 0 ||
      a.st_dev == b.st_dev) {
    fs::remove_all(shm);
    GTEST_SKIP() << "no second file system (/dev/shm)";
  }
  writeFile(shm + "/log", "new log");
  std::string final = Dir / "log";
  writeFile(final, "older");
  SyncRecorder syncs;
  syncs.Observe = [&](const SyncEvent &) { return contentsOrAbsent(final); };
  llvm::Error moved = moveFile(shm + "/log", final);
  fs::remove_all(shm);
  ASSERT_FALSE(static_cast<bool>(moved)) << llvm::toString(std::move(moved));
  std::vector<SyncEvent> events = syncs.events();
  ASSERT_EQ(events.size(), 1u) << describe(events);
  EXPECT_FALSE(events[0].Directory);
  EXPECT_EQ(events[0].Path.rfind(final + ".tmp.", 0), 0u) << describe(events);
  EXPECT_EQ(events[0].Snapshot, "older") << describe(events);
  EXPECT_EQ(readFile(final), "new log");
}

// Group commit's deferral skips the per-file syncs (the batch's syncfs covers
// them) but not the journal's own; --no_fsync (durable writes off) skips all.
TEST_F(Durability, DeferredSyncsSkipFilesAndNoFsyncSkipsEverything) {
  writeFile(Dir / "stage/.keep", "");
  SyncRecorder syncs;
  setSyncDeferred(true);
  ASSERT_FALSE(static_cast<bool>(writeFileAtomically(Dir / "a", "a")));
  EXPECT_EQ(syncs.events().size(), 0u) << describe(syncs.events());
  {
    JournalAppender w;
    ASSERT_FALSE(static_cast<bool>(w.open(Dir / "j", true, Options)));
    w.setGroupCommit(1);
    ASSERT_FALSE(static_cast<bool>(w.append({{"module", "a"}})));
    ASSERT_FALSE(static_cast<bool>(w.close()));
  }
  std::vector<SyncEvent> events = syncs.events();
  ASSERT_EQ(events.size(), 2u) << describe(events);
  EXPECT_EQ(events[0].Call, SyncCall::Syncfs);
  EXPECT_EQ(events[1].Call, SyncCall::Fdatasync);

  syncs.clear();
  setSyncDeferred(false);
  setDurableWrites(false);
  ASSERT_FALSE(static_cast<bool>(writeFileAtomically(Dir / "b", "b")));
  {
    StagedFiles files(Dir / "stage");
    ASSERT_FALSE(static_cast<bool>(files.add(Dir / "new/m.bc", "bc")));
    ASSERT_FALSE(static_cast<bool>(files.commit()));
  }
  {
    JournalAppender w;
    ASSERT_FALSE(static_cast<bool>(w.open(Dir / "j2", true, Options)));
    w.setGroupCommit(1);
    ASSERT_FALSE(static_cast<bool>(w.append({{"module", "a"}})));
    ASSERT_FALSE(static_cast<bool>(w.close()));
  }
  EXPECT_EQ(syncs.events().size(), 0u) << describe(syncs.events());
}

} // namespace
