// harvest-logs --decision_sites (issue #23, provenance): in plugin mode each
// log gets logs/<module>.sites.jsonl, one record per observation in log
// order, naming the call site the decision was about. The log itself must
// not change; the sites must agree with the log's own decisions, name the
// module's real functions, and be the same in every run and through the
// compile server and exec alike.
#include "support/FixtureCache.h"
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

class DecisionSites : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    std::string d = Fixture->path();
    fs::create_directories(d + "/bc");
    // c1 and c2 without debug information, c3 with it (-g: locations).
    for (int i = 1; i <= 3; ++i) {
      std::string name = "c" + std::to_string(i);
      writeFile(d + "/src/" + name + ".c", inlinerSource(10 * i, 14 * i, /*withDriver=*/false));
      compileCached(quote(MLGO_CLANG) + (i == 3 ? " -g" : "") + " -Oz -Xclang -disable-llvm-passes -emit-llvm -c src/" +
                        name + ".c -o bc/" + name + ".bc",
                    "src/" + name + ".c", "bc/" + name + ".bc", d);
    }
    mustRun(tool("make-corpus") + " -q --input_dir=" + quote(d + "/bc") + " --output_dir=" + quote(d + "/corpus") +
            " --default_args='-Oz -c'");
  }
  static void TearDownTestSuite() { delete Fixture; }
  static std::string corpus() { return *Fixture / "corpus"; }
  static std::vector<std::string> modules() { return {"c1", "c2", "c3"}; }

  static std::vector<nlohmann::json> sites(const std::string &harvest, const std::string &module) {
    std::vector<nlohmann::json> records;
    std::istringstream lines(readFile(harvest + "/logs/" + module + ".sites.jsonl"));
    for (std::string line; std::getline(lines, line);)
      records.push_back(nlohmann::json::parse(line));
    return records;
  }

  // The module's function names, as llvm-nm-22 lists its bitcode.
  static std::set<std::string> functions(const std::string &module) {
    CommandResult r = run("llvm-nm-22 --format=just-symbols " + quote(corpus() + "/" + module + ".bc"));
    EXPECT_EQ(r.ExitCode, 0) << r.Err;
    std::set<std::string> names;
    std::istringstream lines(r.Out);
    for (std::string line; std::getline(lines, line);)
      names.insert(line);
    return names;
  }

  TempDir Work;
  static TempDir *Fixture;
};
TempDir *DecisionSites::Fixture = nullptr;

TEST_F(DecisionSites, OneSitePerObservationInLogOrderNamingRealFunctions) {
  // A random policy: decisions that differ from the default ones.
  std::string policy = " --mode=plugin --policy=random:0.5:11 --num_workers=2";
  std::string with = Work / "with", without = Work / "without", again = Work / "again";
  CommandResult r = run(harvestCommand(corpus(), with, "--decision_sites --compile_server=on" + policy));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  mustRun(harvestCommand(corpus(), without, "--compile_server=off" + policy));
  mustRun(harvestCommand(corpus(), again, "--decision_sites --compile_server=off" + policy));

  size_t flipped = 0, total = 0;
  for (const std::string &m : modules()) {
    SCOPED_TRACE(m);
    // The log is the one a run without --decision_sites writes.
    std::string log = readFile(with + "/logs/" + m + ".log");
    ASSERT_FALSE(log.empty());
    EXPECT_TRUE(log == readFile(without + "/logs/" + m + ".log")) << "--decision_sites changed the log";
    EXPECT_FALSE(exists(without + "/logs/" + m + ".sites.jsonl"));
    // The same sites in another run, through exec instead of the server.
    EXPECT_EQ(readFile(with + "/logs/" + m + ".sites.jsonl"), readFile(again + "/logs/" + m + ".sites.jsonl"));

    std::vector<LoggedObservation> observations = readObservations(with + "/logs/" + m + ".log");
    std::vector<nlohmann::json> records = sites(with, m);
    ASSERT_EQ(records.size(), observations.size());
    EXPECT_EQ(journalByModule(with)[m]["decisions"].get<size_t>(), records.size());
    std::set<std::string> names = functions(m);
    std::map<std::pair<std::string, std::string>, int64_t> ordinals;
    for (size_t i = 0; i < records.size(); ++i) {
      const nlohmann::json &site = records[i];
      ASSERT_EQ(site.size(), 8u) << site.dump();
      // Not below the threshold: the heuristic did not inline (deferral
      // only turns a yes into a no).
      ASSERT_TRUE(site["cost_margin"].is_null() || site["cost_margin"].is_number_integer()) << site.dump();
      if (site["cost_margin"].is_number_integer() && site["cost_margin"].get<int64_t>() <= 0)
        EXPECT_FALSE(site["default"].get<bool>()) << site.dump();
      EXPECT_EQ(site["default"].get<bool>(), observations[i]["inlining_default"] != 0) << i;
      EXPECT_EQ(site["decision"].get<bool>(), observations[i]["inlining_decision"] != 0) << i;
      std::string caller = site["caller"], callee = site["callee"];
      EXPECT_TRUE(names.count(caller)) << caller << " is not a function of " << m;
      EXPECT_TRUE(names.count(callee)) << callee << " is not a function of " << m;
      // The k-th decision about this caller and callee.
      int64_t expected = ordinals[std::make_pair(caller, callee)]++;
      EXPECT_EQ(site["site"].get<int64_t>(), expected) << site.dump();
      flipped += site["default"] != site["decision"];
      ++total;
    }
  }
  EXPECT_GT(total, 100u);
  EXPECT_GT(flipped, 10u) << "the random policy should disagree with the default at some sites";
  nlohmann::json summary = harvestSummary(with);
  EXPECT_EQ(summary["decision_sites"]["written"], true);
  std::string formats = std::string(MLGO_SOURCE_DIR) + "/corpus_formats/";
  std::string check = "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " ";
  mustRun(check + quote(formats + "harvest_summary.schema.json") + " " + quote(with + "/summary.json"));
  mustRun(check + "--lines " + quote(formats + "harvest_journal.schema.json") + " " + quote(with + "/harvest.jsonl"));
  std::ifstream journal(with + "/harvest.jsonl");
  std::string header;
  std::getline(journal, header);
  EXPECT_EQ(nlohmann::json::parse(header)["options"]["decision_sites"], true);
}

TEST_F(DecisionSites, LocationsComeFromDebugInformation) {
  std::string out = Work / "h";
  mustRun(harvestCommand(corpus(), out, "--decision_sites --mode=plugin"));
  const std::regex Location(R"(src/c3\.c:[1-9][0-9]*:[1-9][0-9]*)");
  for (const nlohmann::json &site : sites(out, "c3")) {
    EXPECT_TRUE(site["loc"].is_string() && std::regex_match(site["loc"].get<std::string>(), Location)) << site.dump();
    // -cgscc-inline-replay's name of the site: the function the call is in
    // (the caller, or what it was inlined from) by line offset and column.
    const std::regex Replay(
        R"([A-Za-z_][A-Za-z0-9_]*:[0-9]+:[0-9]+(\.[0-9]+)?( @ [A-Za-z_][A-Za-z0-9_]*:[0-9]+:[0-9]+(\.[0-9]+)?)*)");
    ASSERT_TRUE(site["replay_loc"].is_string()) << site.dump();
    std::string replay = site["replay_loc"];
    EXPECT_TRUE(std::regex_match(replay, Replay)) << site.dump();
    std::string outermost = replay.substr(replay.rfind(" @ ") == std::string::npos ? 0 : replay.rfind(" @ ") + 3);
    EXPECT_EQ(outermost.substr(0, outermost.find(':')), site["caller"].get<std::string>()) << site.dump();
  }
  for (const nlohmann::json &site : sites(out, "c1")) {
    EXPECT_TRUE(site["loc"].is_null()) << "c1 has no debug information: " << site.dump();
    EXPECT_TRUE(site["replay_loc"].is_null()) << site.dump();
  }
}

// Names are bytes, and the sites file holds them as UTF-8, with U+FFFD for
// what is not: two callees whose names differ only in such bytes are one
// name there, so their sites are numbered as one pair's, never twice the
// same (caller, callee, site), which every reader refuses.
TEST_F(DecisionSites, NamesThatAreNotUTF8AreNumberedAsWritten) {
  std::string dir = Work / "bytes";
  fs::create_directories(dir + "/bc");
  writeFile(dir + "/m.ll", "define internal i32 @\"\\FF\"(i32 %x) {\n  %y = mul i32 %x, 3\n  ret i32 %y\n}\n"
                           "define internal i32 @\"\\FE\"(i32 %x) {\n  %y = mul i32 %x, 5\n  ret i32 %y\n}\n"
                           "define i32 @caller(i32 %x) {\n  %a = call i32 @\"\\FF\"(i32 %x)\n"
                           "  %b = call i32 @\"\\FE\"(i32 %a)\n  ret i32 %b\n}\n");
  mustRun("llvm-as-22 " + quote(dir + "/m.ll") + " -o " + quote(dir + "/bc/m.bc"));
  mustRun(tool("make-corpus") + " -q --input_dir=" + quote(dir + "/bc") + " --output_dir=" + quote(dir + "/corpus") +
          " --default_args='-Oz -c'");
  std::string out = Work / "h";
  mustRun(harvestCommand(dir + "/corpus", out, "--decision_sites --mode=plugin"));
  std::vector<nlohmann::json> records = sites(out, "m");
  ASSERT_EQ(records.size(), 2u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i]["callee"], "\xEF\xBF\xBD") << records[i].dump();
    EXPECT_EQ(records[i]["site"], i) << records[i].dump();
  }
  // compare-harvests reads it (it refuses a site named twice).
  CommandResult compared = run(tool("compare-harvests") + " " + quote(out) + " " + quote(out));
  EXPECT_EQ(compared.ExitCode, 0) << compared.Err;
}

TEST_F(DecisionSites, InteractiveModeWritesNoneAndSaysWhy) {
  std::string out = Work / "h";
  CommandResult r = run(harvestCommand(corpus(), out, "--decision_sites --mode=interactive"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("--decision_sites: no sites files in interactive mode"), std::string::npos) << r.Err;
  for (const std::string &m : modules()) {
    EXPECT_TRUE(exists(out + "/logs/" + m + ".log")) << m;
    EXPECT_FALSE(exists(out + "/logs/" + m + ".sites.jsonl")) << m;
  }
  nlohmann::json summary = harvestSummary(out);
  EXPECT_EQ(summary["decision_sites"]["written"], false);
  EXPECT_NE(summary["decision_sites"]["reason"].get<std::string>().find("--mode=plugin"), std::string::npos);
}

TEST_F(DecisionSites, ShardsMergeWithTheirSitesAndAResumeMustAskForThem) {
  std::string whole = Work / "whole", s0 = Work / "s0", s1 = Work / "s1", merged = Work / "merged";
  std::string flags = "--decision_sites --mode=plugin";
  mustRun(harvestCommand(corpus(), whole, flags));
  mustRun(harvestCommand(corpus(), s0, flags + " --shard=0/2"));
  mustRun(harvestCommand(corpus(), s1, flags + " --shard=1/2"));
  CommandResult r = run(tool("merge-harvest") + " -q --corpus=" + quote(corpus()) + " --output_dir=" + quote(merged) +
                        " " + quote(s0) + " " + quote(s1));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  for (const std::string &m : modules())
    EXPECT_EQ(readFile(merged + "/logs/" + m + ".sites.jsonl"), readFile(whole + "/logs/" + m + ".sites.jsonl")) << m;
  EXPECT_EQ(harvestSummary(merged)["decision_sites"]["written"], true);

  // A log promised with its sites file, and the file gone: the merge says so.
  fs::remove(s1 + "/logs/" + modules()[1] + ".sites.jsonl");
  fs::remove(s0 + "/logs/" + modules()[1] + ".sites.jsonl");
  r = run(tool("merge-harvest") + " -q --corpus=" + quote(corpus()) + " --output_dir=" + quote(Work / "merged2") + " " +
          quote(s0) + " " + quote(s1));
  EXPECT_NE(r.ExitCode, 0);
  EXPECT_NE(r.Err.find(".sites.jsonl"), std::string::npos) << r.Err;

  // The same directory without --decision_sites: its logs would have no sites.
  r = run(harvestCommand(corpus(), whole, "--mode=plugin"));
  EXPECT_NE(r.ExitCode, 0);
  EXPECT_NE(r.Err.find("decision_sites"), std::string::npos) << r.Err;
}

} // namespace
