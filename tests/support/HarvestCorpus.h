// Corpora for harvest tests, built from C sources by the real clang-22 and
// made into corpora by the real make-corpus / extract-ir; the harvest-logs
// command line over them; readers of what a harvest writes.
#pragma once

#include "TestSupport.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mlgo::test {

/// Writes `count` C modules (m0 .. m<count-1>, 8-27 leaf functions and
/// 10-49 functions making six calls each, so every module has dozens to
/// hundreds of inlinable call sites), compiles them with clang-22 -Oz to
/// unoptimized bitcode, and makes `<dir>/corpus`. Returns the corpus path.
std::string makeHarvestCorpus(const std::string &dir, int count);

/// makeHarvestCorpus' two modules with the first nested (sub/m0, m1), as a
/// corpus made by make-corpus at <dir>/<name>. Returns its path.
std::string makeNestedHarvestCorpus(const std::string &dir, const std::string &name);

/// How extract-ir finds the objects of makeEmbeddedBitcodeCorpus.
enum class ObjectListing {
  Directory,       // --input_type=directory over the objects directory
  CompileCommands, // --input=<dir>/cc.json, a compilation database of the compiles
};

/// Writes each (name, C source) to <dir>/src/<name>.c, compiles it with
/// clang-22 `clangFlags` and embedded bitcode to <dir>/<prefix>objs/<name>.o
/// (command run in that directory, source as ../src/<name>.c) and extracts
/// them with extract-ir into <dir>/<prefix>corpus. Returns the corpus path.
std::string makeEmbeddedBitcodeCorpus(const std::string &dir,
                                      const std::vector<std::pair<std::string, std::string>> &sources,
                                      const std::string &clangFlags, ObjectListing listing,
                                      const std::string &prefix = "");

/// The .cmd file of the module of `corpus` whose file name starts with `stem`
/// (a failure of the calling test when there is none).
std::string cmdFileOf(const std::string &corpus, const std::string &stem);

/// Appends `args` to that module's .cmd, NUL-separated as extract-ir writes it.
void appendToCmd(const std::string &corpus, const std::string &stem, const std::vector<std::string> &args);

/// The four-module inliner corpus of the harvest-logs tests in <dir>/corpus:
/// m1..m4 with inlinerSource(leaves * i, mids * i), -Oz, through a
/// compilation database.
std::string makeInlinerCompileDbCorpus(const std::string &dir, int leaves = 30, int mids = 40);

/// Base of the test suites that harvest makeInlinerCompileDbCorpus: built once
/// per suite, in a directory removed after it.
class InlinerCorpusSuite : public ::testing::Test {
protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  static std::string corpus() { return *Fixture / "corpus"; }

private:
  static TempDir *Fixture;
};

/// The same four modules at about a quarter of the size (80 to 330
/// decisions, against 330 to 1,360): for the suites that compile every
/// module many times over (exploration, replay), where the module's size
/// adds time but no case.
class SmallInlinerCorpusSuite : public ::testing::Test {
protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  static std::string corpus() { return *Fixture / "corpus"; }

private:
  static TempDir *Fixture;
};

/// The harvest-logs command harvesting `corpus` into `out` (no progress
/// lines), with `flags` appended.
std::string harvestCommand(const std::string &corpus, const std::string &out, const std::string &flags = "");

/// Runs `command` (a harvest into `harvestDir`) in the background, SIGKILLs it
/// once the journal holds its first module record (polled `pollInterval`
/// apart) and returns its wait status. When no record appears within
/// GenerousDeadline (or the run ends first), the test fails.
int killNineOnceJournaled(const std::string &command, const std::string &harvestDir,
                          std::chrono::milliseconds pollInterval);

/// The journal records of a harvest directory, header skipped, in file order.
std::vector<nlohmann::json> harvestJournal(const std::string &harvestDir);

/// harvestJournal without each record's `seconds` timing, in file order.
std::vector<nlohmann::json> harvestJournalWithoutSeconds(const std::string &harvestDir);

/// The journal records of a harvest directory by module name (the last wins).
std::map<std::string, nlohmann::json> journalByModule(const std::string &harvestDir);

/// summary.json of a harvest directory; null when it is missing or empty.
nlohmann::json harvestSummary(const std::string &harvestDir);

/// Journal lines of a harvest directory without the `seconds` timing field,
/// sorted (records come in no fixed order), as JSON text.
std::string journalWithoutTimings(const std::string &harvestDir);

/// summary.json without timings (seconds, decisions_per_second,
/// harvester_peak_rss_kb, harvester_cpu_seconds), without a merge's "merge"
/// section and without "compile_server" (how the compilers were started),
/// as JSON text.
std::string summaryWithoutTimings(const std::string &harvestDir);

/// Fails the test unless the logs/ trees of `a` and `b` hold the same files
/// with the same bytes.
void expectSameLogs(const std::string &a, const std::string &b);

} // namespace mlgo::test
