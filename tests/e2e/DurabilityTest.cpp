// The durability policy of the real tools, observed with strace: which
// syncs they make and in which order with the renames and journal writes
// they protect (a missing or late sync loses data only at a power loss,
// which no test can stage). extract-ir: group commit, one syncfs before each
// batch of journal lines, after every file those lines name got its name.
// harvest-logs: each module's log synced before its rename, and its
// directory after, all before the journal record naming it, on a thread of
// their own while the workers compile on. Both: the
// files written at the end (report, manifest, summary, compacted journal)
// are synced before their rename and their directory after; --no_fsync
// makes no sync at all.
#include "support/HarvestCorpus.h"
#include "support/Strace.h"
#include "support/TestSupport.h"

#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <sstream>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> Traced = {"fsync",    "fdatasync", "syncfs", "sync",   "rename",
                                         "renameat", "renameat2", "link",   "linkat", "write"};

std::string parentOf(const std::string &path) { return fs::path(path).parent_path().string(); }

// The JSON lines of a write, parsed (a journal write holds whole lines).
std::vector<nlohmann::json> jsonLines(const std::string &data) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(data);
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      lines.push_back(nlohmann::json::parse(line, nullptr, false));
  return lines;
}

// Journal writes that hold records (not the options header), in trace order.
std::vector<TracedCall> journalRecordWrites(const TraceResult &t, const std::string &journal) {
  std::vector<TracedCall> writes;
  for (const TracedCall &c : t.Calls)
    if (c.Name == "write" && c.FdPath == journal && c.Data.find("\"options\"") == std::string::npos)
      writes.push_back(c);
  return writes;
}

// The successful call that made `path` appear (rename or link onto it); the last one if several.
const TracedCall *namedBy(const TraceResult &t, const std::string &path) {
  const TracedCall *found = nullptr;
  for (const TracedCall &c : t.Calls)
    if (c.To == path && c.Result == 0 && (c.Name.rfind("rename", 0) == 0 || c.Name.rfind("link", 0) == 0))
      found = &c;
  return found;
}

// A file written whole at the end: its temporary is synced before the rename
// that names it, and its directory after.
void expectSyncedAroundRename(const TraceResult &t, const std::string &path) {
  const TracedCall *rename = namedBy(t, path);
  ASSERT_NE(rename, nullptr) << path << " was never renamed into place\n" << t.Raw;
  bool fileSynced = false, directorySynced = false;
  for (const TracedCall &c : t.Calls) {
    fileSynced = fileSynced || (isSync(c) && c.FdPath == rename->From && c.before(*rename));
    directorySynced = directorySynced || (isSync(c) && c.FdPath == parentOf(path) && rename->before(c));
  }
  EXPECT_TRUE(fileSynced) << path << ": its temporary " << rename->From << " was not synced before the rename";
  EXPECT_TRUE(directorySynced) << path << ": its directory was not synced after the rename";
}

void expectNoSyncs(const TraceResult &t, const std::string &what) {
  size_t syncs = 0, renames = 0;
  for (const TracedCall &c : t.Calls) {
    syncs += isSync(c);
    renames += c.Name.rfind("rename", 0) == 0 || c.Name.rfind("link", 0) == 0;
  }
  EXPECT_EQ(syncs, 0u) << what << " with --no_fsync made syncs:\n" << t.Raw;
  EXPECT_GT(renames, 0u) << what << ": the trace shows no renames, so it shows nothing\n" << t.Raw;
}

class Durability : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(straceWorks(why)) << why;
    // Paths as the kernel reports them (strace -y) equal the ones we pass.
    Root = fs::canonical(Work.path()).string();
  }
  TempDir Work;
  std::string Root;
};

class ExtractIrDurability : public Durability {
protected:
  // `count` objects (copies of two) in <Root>/objs; more than one batch of 64.
  std::string makeObjects(int count) {
    std::string objs = Root + "/objs";
    compileC("int helper(int x) { return x * 3; }\nint a(int x) { return helper(x) + 1; }\n", Root + "/a.o");
    compileC("static int sq(int x) { return x * x; }\nint b(int x) { return sq(x) - 2; }\n", Root + "/b.o");
    fs::create_directories(objs);
    for (int i = 0; i < count; ++i)
      fs::copy_file(Root + (i % 2 ? "/a.o" : "/b.o"), objs + "/m" + std::to_string(i) + ".o");
    return objs;
  }
  std::string extract(const std::string &objs, const std::string &out, const std::string &flags = "") {
    return tool("extract-ir") + " --input=" + quote(objs) + " --input_type=directory --num_workers=2 " +
           "--progress_interval=0 --output_dir=" + quote(out) + " " + flags;
  }
};

TEST_F(ExtractIrDurability, GroupCommitSyncsBeforeEachBatchOfJournalLines) {
  const int Modules = 150;
  std::string objs = makeObjects(Modules), out = Root + "/out";
  TraceResult t = runTraced(extract(objs, out), Traced);
  ASSERT_EQ(t.Run.ExitCode, 0) << t.Run.Err;
  std::string journal = out + "/.mlgo-corpus/extract_ir.journal";
  std::vector<TracedCall> batches = journalRecordWrites(t, journal);
  ASSERT_GE(batches.size(), 2u) << "150 modules make more than one batch\n" << t.Raw;
  size_t journaled = 0, syncfsCalls = 0;
  for (const TracedCall &c : t.Calls)
    syncfsCalls += c.Name == "syncfs";
  EXPECT_EQ(syncfsCalls, batches.size()) << "one syncfs per batch";
  size_t previousEnd = 0;
  for (const TracedCall &batch : batches) {
    // The latest syncfs that ended before this batch was written, made
    // after the previous batch: its own.
    const TracedCall *syncfs = nullptr;
    for (const TracedCall &c : t.Calls)
      if (c.Name == "syncfs" && c.before(batch) && c.Result == 0)
        syncfs = &c;
    ASSERT_NE(syncfs, nullptr) << "a batch of journal lines written without a syncfs before it:\n" << batch.Data;
    EXPECT_GT(syncfs->Start, previousEnd) << "a batch reuses the previous batch's syncfs";
    EXPECT_EQ(syncfs->FdPath, journal) << "the syncfs is not of the journal's file system";
    previousEnd = batch.End;
    // Every module file these lines name had its name before that syncfs.
    for (const nlohmann::json &record : jsonLines(batch.Data)) {
      ASSERT_TRUE(record.is_object()) << batch.Data;
      ++journaled;
      EXPECT_EQ(record["status"], "ok") << record.dump();
      for (const char *suffix : {".bc", ".cmd"}) {
        std::string file = out + "/" + record["name"].get<std::string>() + suffix;
        const TracedCall *named = namedBy(t, file);
        ASSERT_NE(named, nullptr) << file << " never got its name\n" << t.Raw;
        EXPECT_TRUE(named->before(*syncfs)) << file << " got its name after the syncfs that made its line durable";
      }
    }
  }
  EXPECT_EQ(journaled, static_cast<size_t>(Modules));
  // Group commit replaces the per-file syncs: no module file is synced alone.
  for (const TracedCall &c : t.Calls)
    EXPECT_FALSE(isSync(c) && c.Name != "syncfs" && c.FdPath.find(".bc") != std::string::npos) << c.FdPath;
  // The journal is synced after its last line; the end's files around their renames.
  bool journalSynced = false;
  for (const TracedCall &c : t.Calls)
    journalSynced = journalSynced || (c.Name == "fdatasync" && c.FdPath == journal && batches.back().before(c));
  EXPECT_TRUE(journalSynced) << "the journal's last lines are not synced";
  expectSyncedAroundRename(t, out + "/corpus_description.json");
  expectSyncedAroundRename(t, out + "/.mlgo-corpus/extract_ir.report.json");
  expectSyncedAroundRename(t, journal); // compacted
}

TEST_F(ExtractIrDurability, NoFsyncMakesNoSyncs) {
  std::string objs = makeObjects(8), out = Root + "/out";
  TraceResult t = runTraced(extract(objs, out, "--no_fsync"), Traced);
  ASSERT_EQ(t.Run.ExitCode, 0) << t.Run.Err;
  expectNoSyncs(t, "extract-ir");
  EXPECT_EQ(listTree(out).size(), 17u) << "8 modules (.bc, .cmd) and the manifest";
}

class HarvestDurability : public InlinerCorpusSuite {
protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(straceWorks(why)) << why;
    Root = fs::canonical(Work.path()).string();
  }
  TempDir Work;
  std::string Root;
};

TEST_F(HarvestDurability, EachLogIsSyncedWithItsDirectoryBeforeItsJournalRecord) {
  std::string out = Root + "/out";
  TraceResult t = runTraced(harvestCommand(corpus(), out, "--num_workers=2"), Traced);
  ASSERT_EQ(t.Run.ExitCode, 0) << t.Run.Err;
  std::string journal = out + "/harvest.jsonl";
  size_t logs = 0;
  for (const TracedCall &write : journalRecordWrites(t, journal)) {
    for (const nlohmann::json &record : jsonLines(write.Data)) {
      ASSERT_TRUE(record.is_object()) << write.Data;
      if (!record.value("log_written", false))
        continue;
      ++logs;
      std::string module = record["module"];
      std::string log = out + "/logs/" + module + ".log";
      const TracedCall *rename = namedBy(t, log);
      ASSERT_NE(rename, nullptr) << log << " was never renamed into place\n" << t.Raw;
      EXPECT_TRUE(rename->before(write)) << module << ": journaled before its log got its name";
      bool logSynced = false, directorySynced = false;
      for (const TracedCall &c : t.Calls) {
        logSynced = logSynced || (isSync(c) && c.FdPath == rename->From && c.before(*rename));
        directorySynced =
            directorySynced || (isSync(c) && c.FdPath == parentOf(log) && rename->before(c) && c.before(write));
      }
      EXPECT_TRUE(logSynced) << module << ": " << rename->From << " was not synced before its rename";
      EXPECT_TRUE(directorySynced) << module << ": logs/ was not synced between the rename and the journal record";
    }
  }
  EXPECT_EQ(logs, 4u) << t.Raw;
  expectSyncedAroundRename(t, out + "/summary.json");
  expectSyncedAroundRename(t, journal); // compacted
}

// The syncs that make a log durable run beside the compiles, not in their
// way: with the first fdatasync slowed by 2 s, the one worker has compiled
// (its compiler wrote into a work directory) while the first log's sync
// was still under way.
TEST_F(HarvestDurability, TheWorkerCompilesOnWhileALogIsSynced) {
  std::string out = Root + "/out";
  TraceResult t = runTraced(harvestCommand(corpus(), out, "--num_workers=1"), Traced, "",
                            "-e inject=fdatasync:delay_exit=2000000:when=1");
  ASSERT_EQ(t.Run.ExitCode, 0) << t.Run.Err;
  // strace prints a delayed call as finished and then holds its thread: the
  // thread's next call marks the end of the delay.
  size_t logSync = t.Calls.size();
  for (size_t i = 0; i < t.Calls.size() && logSync == t.Calls.size(); ++i) {
    const TracedCall &c = t.Calls[i];
    if (c.Name == "fdatasync" && c.FdPath.find("/.mlgo-harvest/work/") != std::string::npos &&
        llvm::StringRef(c.FdPath).ends_with(".log"))
      logSync = i;
  }
  ASSERT_LT(logSync, t.Calls.size()) << "no log was synced in its work directory\n" << t.Raw;
  const TracedCall &sync = t.Calls[logSync];
  size_t compilerWrites = 0;
  for (size_t i = logSync + 1; i < t.Calls.size() && t.Calls[i].Pid != sync.Pid; ++i)
    compilerWrites += t.Calls[i].Name == "write" && t.Calls[i].FdPath.find("/.mlgo-harvest/work/") != std::string::npos;
  EXPECT_GT(compilerWrites, 0u) << "nothing was compiled while " << sync.FdPath << " was synced\n" << t.Raw;
  EXPECT_EQ(journalByModule(out).size(), 4u);
}

TEST_F(HarvestDurability, NoFsyncMakesNoSyncs) {
  std::string out = Root + "/out";
  TraceResult t = runTraced(harvestCommand(corpus(), out, "--num_workers=2 --modules_filter=m1 --no_fsync"), Traced);
  ASSERT_EQ(t.Run.ExitCode, 0) << t.Run.Err;
  expectNoSyncs(t, "harvest-logs");
  EXPECT_TRUE(exists(out + "/logs/m1.o.log"));
}

} // namespace
