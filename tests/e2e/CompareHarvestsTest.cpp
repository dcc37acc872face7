// compare-harvests on real harvests: a small C corpus harvested by the real
// harvest-logs with the default policy (A) and with a policy that never
// inlines (B, random:0). A against itself shows no change; A against B shows
// the growth, module by module, as the journals say; with --decision_sites
// the flipped sites are the default's inlined calls between the corpus' own
// functions; bad input fails naming the file; the HTML page renders in a
// real headless Chromium.
#include "support/Deadline.h"
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>

using namespace mlgo::test;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

const std::string Compare = tool("compare-harvests");

class CompareHarvests : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    Corpus = makeHarvestCorpus(Fixture->path(), 4);
    mustRun(harvestCommand(Corpus, harvestA(), "-q --num_workers=2 --policy=default"));
    mustRun(harvestCommand(Corpus, harvestB(), "-q --num_workers=2 --policy=random:0"));
  }
  static void TearDownTestSuite() { delete Fixture; }
  static std::string harvestA() { return *Fixture / "a"; }
  static std::string harvestB() { return *Fixture / "b"; }

  static Json readJson(const std::string &path) { return Json::parse(readFile(path)); }
  static void expectSchema(const std::string &path) {
    mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " " +
            quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/compare_harvests.schema.json") + " " + quote(path));
  }

  static TempDir *Fixture;
  static std::string Corpus;
  TempDir Work;
};
TempDir *CompareHarvests::Fixture = nullptr;
std::string CompareHarvests::Corpus;

TEST_F(CompareHarvests, AHarvestAgainstItselfHasNoChangeAndNoFlippedSite) {
  std::string json = Work / "same.json";
  CommandResult r = run(Compare + " " + quote(harvestA()) + " " + quote(harvestA()) + " --json=" + quote(json));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  Json j = readJson(json);
  uint64_t total = 0;
  for (const auto &[module, record] : journalByModule(harvestA()))
    total += record["native_size"].get<uint64_t>();
  EXPECT_GT(total, 0u);
  EXPECT_EQ(j["total"]["a_size"], total);
  EXPECT_EQ(j["total"]["b_size"], total);
  EXPECT_EQ(j["total"]["change"], 0.0);
  EXPECT_EQ(j["geomean"]["ratio"], 1.0);
  EXPECT_EQ(j["counts"]["unchanged"], 4);
  EXPECT_EQ(j["top_grown"], Json::array());
  EXPECT_EQ(j["flipped_sites"], Json::array());
  // No sites files: said so, in the JSON and on stdout, and no failure.
  EXPECT_FALSE(j["sites"]["compared"].get<bool>());
  EXPECT_NE(j["sites"]["message"].get<std::string>().find("no decision sites files"), std::string::npos);
  EXPECT_NE(r.Out.find("change 0.00%"), std::string::npos) << r.Out;
  EXPECT_NE(r.Out.find("decision sites: A (" + harvestA() + ") and B (" + harvestA() + ") have no decision sites"),
            std::string::npos)
      << r.Out;
  expectSchema(json);
}

TEST_F(CompareHarvests, NeverInliningGrowsTheCodeModuleByModule) {
  std::string json = Work / "ab.json";
  CommandResult r = run(Compare + " " + quote(harvestA()) + " " + quote(harvestB()) + " --top=2 --json=" + quote(json));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  Json j = readJson(json);
  EXPECT_GT(j["total"]["b_size"].get<uint64_t>(), j["total"]["a_size"].get<uint64_t>()) << j["total"];
  EXPECT_GT(j["total"]["change"].get<double>(), 0);
  EXPECT_GT(j["geomean"]["ratio"].get<double>(), 1);
  EXPECT_EQ(j["a"]["policy"], "default");
  EXPECT_EQ(j["b"]["policy"].get<std::string>().rfind("random:0", 0), 0u) << j["b"];
  // Every module, with the sizes its journals record.
  auto a = journalByModule(harvestA()), b = journalByModule(harvestB());
  ASSERT_EQ(j["modules"].size(), 4u);
  for (const Json &row : j["modules"]) {
    std::string module = row["module"];
    EXPECT_EQ(row["a_size"], a.at(module)["native_size"]) << module;
    EXPECT_EQ(row["b_size"], b.at(module)["native_size"]) << module;
    EXPECT_DOUBLE_EQ(row["change"].get<double>(), row["b_size"].get<double>() / row["a_size"].get<double>() - 1);
  }
  EXPECT_EQ(j["counts"]["grown"].get<size_t>() + j["counts"]["shrunk"].get<size_t>() +
                j["counts"]["unchanged"].get<size_t>(),
            4u);
  EXPECT_GT(j["counts"]["grown"].get<size_t>(), 0u);
  ASSERT_EQ(j["top_grown"].size(), 2u);
  EXPECT_GE(j["top_grown"][0]["change"].get<double>(), j["top_grown"][1]["change"].get<double>());
  EXPECT_NE(r.Out.find("modules that grew most (top 2):\n  +"), std::string::npos) << r.Out;
  EXPECT_NE(r.Out.find(j["top_grown"][0]["module"].get<std::string>()), std::string::npos) << r.Out;
  expectSchema(json);
}

TEST_F(CompareHarvests, BadInputFailsNamingTheFileAndWritesNothing) {
  std::string json = Work / "out.json";
  CommandResult r = run(Compare + " " + quote(harvestA()) + " " + quote(Work / "absent") + " --json=" + quote(json));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("B: " + Work / "absent" + " is not a directory"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(json));

  // A killed harvest's torn journal.
  fs::copy(harvestB(), Work / "torn", fs::copy_options::recursive);
  writeFile(Work / "torn/harvest.jsonl", readFile(Work / "torn/harvest.jsonl") + "{\"module\": \"m9\", \"sta");
  r = run(Compare + " " + quote(harvestA()) + " " + quote(Work / "torn") + " --json=" + quote(json));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find(Work / "torn/harvest.jsonl: the last line is torn"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(json));

  r = run(Compare + " " + quote(harvestA()));
  EXPECT_EQ(r.ExitCode, 2) << r.Err;
  // An output that cannot be written is an error too; no temporary is left.
  r = run(Compare + " " + quote(harvestA()) + " " + quote(harvestB()) + " --json=" + quote(Work / "no/such/dir/x"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find(Work / "no/such/dir/x"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "no"));
  for (const std::string &entry : listTree(Work.path()))
    EXPECT_EQ(entry.find(".tmp."), std::string::npos) << "left behind: " << entry;
}

// With provenance (harvest-logs --decision_sites, plugin mode): never
// inlining flips exactly the sites the default inlined, and they name the
// corpus' own functions. Skips on a harvest-logs without the flag.
TEST_F(CompareHarvests, FlippedSitesNameTheCorpusFunctions) {
  if (run(tool("harvest-logs") + " --help").Out.find("--decision_sites") == std::string::npos)
    GTEST_SKIP() << "harvest-logs has no --decision_sites yet";
  std::string a = Work / "sites-a", b = Work / "sites-b", json = Work / "sites.json";
  mustRun(harvestCommand(Corpus, a, "-q --num_workers=2 --mode=plugin --decision_sites --policy=default"));
  mustRun(harvestCommand(Corpus, b, "-q --num_workers=2 --mode=plugin --decision_sites --policy=random:0"));
  for (const std::string &dir : {a, b})
    for (int i = 0; i < 4; ++i)
      mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " --lines " +
              quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/decision_sites.schema.json") + " " +
              quote(dir + "/logs/m" + std::to_string(i) + ".sites.jsonl"));

  CommandResult r = run(Compare + " " + quote(a) + " " + quote(a) + " --json=" + quote(json));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  Json same = readJson(json);
  EXPECT_TRUE(same["sites"]["compared"].get<bool>()) << same["sites"];
  EXPECT_GT(same["sites"]["matched"].get<size_t>(), 0u);
  EXPECT_EQ(same["flipped_sites"], Json::array());

  r = run(Compare + " " + quote(a) + " " + quote(b) + " --json=" + quote(json));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  Json j = readJson(json);
  EXPECT_TRUE(j["sites"]["compared"].get<bool>()) << j["sites"];
  EXPECT_EQ(j["sites_problems"], Json::array());
  ASSERT_GT(j["flipped_sites"].size(), 0u) << r.Out;
  std::map<std::string, std::string> sources;
  for (int i = 0; i < 4; ++i)
    sources["m" + std::to_string(i)] = readFile(*Fixture / ("src/m" + std::to_string(i) + ".c"));
  std::optional<double> previous;
  for (const Json &site : j["flipped_sites"]) {
    std::string module = site["module"];
    ASSERT_TRUE(sources.count(module)) << site;
    // Defined in that module's source: "int NAME(" or "static int NAME(".
    for (const char *key : {"caller", "callee"})
      EXPECT_NE(sources[module].find("int " + site[key].get<std::string>() + "("), std::string::npos) << site;
    // random:0 never inlines: a flip is a site A (the default) inlined.
    EXPECT_TRUE(site["a_decision"].get<bool>()) << site;
    EXPECT_FALSE(site["b_decision"].get<bool>()) << site;
    EXPECT_TRUE(site["default"].get<bool>()) << site;
    double change = site["module_change"].get<double>();
    if (previous)
      EXPECT_LE(change, *previous) << "flipped sites not by their module's growth";
    previous = change;
  }
  EXPECT_NE(r.Out.find(" flipped of "), std::string::npos) << r.Out;
  expectSchema(json);
}

// Chromium's screenshot of a page, decoded by tests/e2e/png_pixels.py.
struct Screenshot {
  bool Taken = false;
  Json Pixels;
};

Screenshot screenshot(const std::string &page, const std::string &work) {
  std::string png = work + "/shot.png", profile = work + "/chromium-profile";
  // setsid + timeout: Chromium's helper processes share its session and die
  // with it; a hang is killed at the deadline.
  CommandResult r =
      run("timeout -k 5 90 chromium --headless --no-sandbox --disable-gpu --no-first-run "
          "--disable-crash-reporter --disable-breakpad --hide-scrollbars --user-data-dir=" +
              quote(profile) + " --screenshot=" + quote(png) + " --window-size=1200,1600 " + quote("file://" + page),
          "", std::chrono::seconds(120));
  EXPECT_EQ(r.ExitCode, 0) << r.Err;
  // Its helpers (zygote, renderer, GPU) end with it; a survivor fails the test.
  EXPECT_TRUE(waitUntil([&] { return processesMentioning(profile) == 0; }, std::chrono::seconds(10),
                        "Chromium's processes to end"))
      << "a Chromium process outlived the screenshot";
  Screenshot shot;
  if (r.ExitCode != 0 || !exists(png))
    return shot;
  CommandResult decoded = run("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/png_pixels.py") +
                              " " + quote(png) + " '#c62828' '#9e9e9e'");
  EXPECT_EQ(decoded.ExitCode, 0) << decoded.Err;
  if (decoded.ExitCode == 0) {
    shot.Taken = true;
    shot.Pixels = Json::parse(decoded.Out);
  }
  return shot;
}

TEST_F(CompareHarvests, TheHtmlPageRendersInAHeadlessBrowser) {
  if (run("command -v chromium").ExitCode != 0)
    GTEST_SKIP() << "chromium is not installed (scripts/test.sh installs it as root: apt-get install chromium)";
  std::string html = Work / "report.html";
  CommandResult r = run(Compare + " -q " + quote(harvestA()) + " " + quote(harvestB()) + " --html=" + quote(html));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(r.Out, "");
  std::string page = readFile(html);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);

  Screenshot shot = screenshot(html, Work.path());
  ASSERT_TRUE(shot.Taken);
  EXPECT_EQ(shot.Pixels["width"], 1200);
  EXPECT_EQ(shot.Pixels["height"], 1600);
  // Text, tables and charts cover a good part of the page; the regression
  // bars (#c62828) and the histogram drew.
  EXPECT_GT(shot.Pixels["non_white"].get<size_t>(), 20000u) << shot.Pixels;
  EXPECT_GT(shot.Pixels["near"]["#c62828"].get<size_t>(), 1000u) << shot.Pixels;

  // The same browser on an empty page draws nothing: the check can tell.
  writeFile(Work / "empty/empty.html", "<!DOCTYPE html><html><body></body></html>\n");
  Screenshot empty = screenshot(Work / "empty/empty.html", Work / "empty");
  ASSERT_TRUE(empty.Taken);
  EXPECT_EQ(empty.Pixels["non_white"], 0) << empty.Pixels;
}

} // namespace
