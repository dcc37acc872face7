// compare-harvests' library on hand-built harvest directories: the numbers
// (totals, change, geometric mean, growth order, modules in one harvest only
// or failed), the sites.jsonl reader on good and hostile lines, the flipped
// sites, and the HTML page's escaping of names that come from the data.
#include "mlgo/compare/ComparisonReport.h"
#include "mlgo/compare/HarvestComparison.h"
#include "mlgo/compare/HtmlReport.h"
#include "mlgo/log/DecisionSites.h"

#include "support/TestSupport.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>

using namespace mlgo;
using namespace mlgo::test;

namespace {

using Json = nlohmann::ordered_json;

Json record(const std::string &module, std::optional<uint64_t> size, const std::string &status = "ok",
            size_t decisions = 3) {
  HarvestRecord r;
  r.Module = module;
  r.Status = status;
  r.Reason = status == "ok" ? "" : status == "timeout" ? "timeout" : "compiler_failed";
  r.Decisions = status == "ok" ? decisions : 0;
  r.LogWritten = status == "ok" && decisions > 0;
  r.NativeSize = status == "ok" ? size : std::nullopt;
  return r.toJson();
}

// A harvest directory holding just a journal with these records.
std::string harvestDir(const TempDir &tmp, const std::string &name, const std::vector<Json> &records,
                       const std::string &policy = "default") {
  std::string text = Json{{"options", {{"problem", "inliner"}, {"policy", policy}}}}.dump() + "\n";
  for (const Json &r : records)
    text += r.dump() + "\n";
  writeFile(tmp / (name + "/harvest.jsonl"), text);
  return tmp / name;
}

HarvestComparison compare(const std::string &a, const std::string &b) {
  auto c = compareHarvestDirectories(a, b);
  if (!c) {
    ADD_FAILURE() << llvm::toString(c.takeError());
    return {};
  }
  return std::move(*c);
}

std::string compareError(const std::string &a, const std::string &b) {
  auto c = compareHarvestDirectories(a, b);
  if (c) {
    ADD_FAILURE() << "the comparison of " << a << " and " << b << " was made";
    return "";
  }
  return llvm::toString(c.takeError());
}

std::vector<std::string> names(const std::vector<ModuleSizeChange> &modules) {
  std::vector<std::string> out;
  for (const ModuleSizeChange &m : modules)
    out.push_back(m.Module);
  return out;
}

TEST(CompareHarvests, TotalsChangeGeomeanAndModulesNotCompared) {
  TempDir tmp;
  // m1's first record is superseded (the latest per module counts, as in
  // every reader of a journal).
  std::string a =
      harvestDir(tmp, "a",
                 {record("m1", 5000), record("m2", 2000), record("m3", 500), record("m4", 700), record("m5", 900),
                  record("m1", 1000), record("m7", std::nullopt), record("m8", 100, "timeout")});
  std::string b = harvestDir(tmp, "b",
                             {record("m1", 1100), record("m2", 1800), record("m3", 500), record("m4", 10, "failed"),
                              record("m6", 300), record("m7", 50), record("m8", 100)},
                             "random:0");
  HarvestComparison c = compare(a, b);
  EXPECT_EQ(c.ASize, 3500u);
  EXPECT_EQ(c.BSize, 3400u);
  ASSERT_TRUE(c.Change);
  EXPECT_NEAR(*c.Change, 3400.0 / 3500.0 - 1, 1e-12);
  ASSERT_TRUE(c.GeomeanRatio);
  EXPECT_NEAR(*c.GeomeanRatio, std::cbrt(1.1 * 0.9 * 1.0), 1e-12);
  EXPECT_EQ(c.GeomeanModules, 3u);
  EXPECT_EQ(names(c.Modules), (std::vector<std::string>{"m1", "m2", "m3"}));
  EXPECT_EQ(c.Grown, 1u);
  EXPECT_EQ(c.Shrunk, 1u);
  EXPECT_EQ(c.Unchanged, 1u);
  EXPECT_EQ(c.OnlyInA, std::vector<std::string>{"m5"});
  EXPECT_EQ(c.OnlyInB, std::vector<std::string>{"m6"});
  ASSERT_EQ(c.Failed.size(), 3u);
  EXPECT_EQ(c.Failed[0].Module, "m4");
  EXPECT_EQ(c.Failed[0].A, "ok");
  EXPECT_EQ(c.Failed[0].B, "failed: compiler_failed");
  EXPECT_EQ(c.Failed[1].Module, "m7");
  EXPECT_EQ(c.Failed[1].A, "ok without native_size");
  EXPECT_EQ(c.Failed[2].A, "timeout: timeout");
  EXPECT_EQ(c.A.Policy, "default");
  EXPECT_EQ(c.B.Policy, "random:0");
  EXPECT_EQ(c.A.Modules, 7u);

  Json j = comparisonJson(c, 20);
  EXPECT_EQ(j["total"]["a_size"], 3500);
  EXPECT_EQ(j["total"]["b_size"], 3400);
  EXPECT_NEAR(j["total"]["change"].get<double>(), 3400.0 / 3500.0 - 1, 1e-12);
  ASSERT_EQ(j["modules"].size(), 3u);
  EXPECT_EQ(j["modules"][0],
            (Json{{"module", "m1"}, {"a_size", 1000}, {"b_size", 1100}, {"change", 1100.0 / 1000 - 1}}));
  EXPECT_EQ(j["top_grown"].size(), 1u);
  EXPECT_EQ(j["only_in_a"], Json::array({"m5"}));
  EXPECT_EQ(j["failed"].size(), 3u);
  EXPECT_EQ(j["flipped_sites"], Json::array());
  EXPECT_FALSE(j["sites"]["compared"].get<bool>());

  std::string text = comparisonText(c, 20);
  EXPECT_NE(text.find("A 3500 bytes, B 3400 bytes, change -2.86%"), std::string::npos) << text;
  EXPECT_NE(text.find("m4: A ok, B failed: compiler_failed"), std::string::npos) << text;
  EXPECT_NE(text.find("only in A:\n  m5"), std::string::npos) << text;
  EXPECT_NE(text.find("have no decision sites files"), std::string::npos) << text;
}

TEST(CompareHarvests, GrowthOrderAndSizesFromZero) {
  TempDir tmp;
  std::string a = harvestDir(tmp, "a",
                             {record("small", 100), record("big", 1000), record("tie", 2000), record("empty", 0),
                              record("both-empty", 0), record("shrunk", 100)});
  std::string b = harvestDir(tmp, "b",
                             {record("small", 150), record("big", 1500), record("tie", 2200), record("empty", 40),
                              record("both-empty", 0), record("shrunk", 50)});
  HarvestComparison c = compare(a, b);
  // From nothing first; then by change; equal changes by bytes added.
  EXPECT_EQ(names(c.topGrown(20)), (std::vector<std::string>{"empty", "big", "small", "tie"}));
  EXPECT_EQ(names(c.topGrown(2)), (std::vector<std::string>{"empty", "big"}));
  EXPECT_EQ(c.GeomeanModules, 4u); // not the zero-sized ones
  auto empty = std::find_if(c.Modules.begin(), c.Modules.end(), [](auto &m) { return m.Module == "empty"; });
  EXPECT_FALSE(empty->Change);
  EXPECT_EQ(formatChange(empty->Change), "+inf%");
  Json j = comparisonJson(c, 20);
  // By name: big, both-empty, empty, ...
  EXPECT_EQ(j["modules"][1]["change"], 0.0) << j["modules"][1];
  EXPECT_TRUE(j["modules"][2]["change"].is_null()) << j["modules"][2];
  EXPECT_EQ(c.Unchanged, 1u);
}

TEST(CompareHarvests, TheSameHarvestHasNoChange) {
  TempDir tmp;
  std::string a = harvestDir(tmp, "a", {record("m1", 100), record("m2", 300)});
  HarvestComparison c = compare(a, a);
  EXPECT_EQ(c.Change, 0.0);
  EXPECT_EQ(c.GeomeanRatio, 1.0);
  EXPECT_EQ(c.Unchanged, 2u);
  EXPECT_TRUE(c.topGrown(20).empty());
}

TEST(CompareHarvests, BadDirectoriesAreErrorsNamingTheFile) {
  TempDir tmp;
  std::string good = harvestDir(tmp, "good", {record("m1", 100)});
  EXPECT_NE(compareError(tmp / "absent", good).find("A: " + tmp / "absent" + " is not a directory"), std::string::npos);
  writeFile(tmp / "empty/readme", "");
  std::string message = compareError(good, tmp / "empty");
  EXPECT_NE(message.find("B: " + tmp / "empty/harvest.jsonl"), std::string::npos) << message;
  EXPECT_NE(message.find("not a harvest directory"), std::string::npos) << message;

  std::string torn = harvestDir(tmp, "torn", {record("m1", 100)});
  writeFile(torn + "/harvest.jsonl", readFile(torn + "/harvest.jsonl") + "{\"module\": \"m2\", \"sta");
  message = compareError(good, torn);
  EXPECT_NE(message.find(torn + "/harvest.jsonl: the last line is torn"), std::string::npos) << message;

  std::string wrong = harvestDir(tmp, "wrong", {record("m1", 100)});
  Json bad = record("m2", 100);
  bad["native_size"] = "100";
  writeFile(wrong + "/harvest.jsonl", readFile(wrong + "/harvest.jsonl") + bad.dump() + "\n");
  message = compareError(wrong, good);
  EXPECT_NE(message.find(wrong + "/harvest.jsonl line 3: field 'native_size'"), std::string::npos) << message;

  std::string garbage = harvestDir(tmp, "garbage", {});
  writeFile(garbage + "/harvest.jsonl",
            readFile(garbage + "/harvest.jsonl") + "not json\n" + record("m", 1).dump() + "\n");
  message = compareError(good, garbage);
  EXPECT_NE(message.find(garbage + "/harvest.jsonl, line 2"), std::string::npos) << message;
}

// Sites files ---------------------------------------------------------------

Json site(const std::string &caller, const std::string &callee, uint64_t n, bool decision, bool deflt = true) {
  return {{"caller", caller}, {"callee", callee},    {"site", n}, {"loc", "m.c:" + std::to_string(n + 1) + ":3"},
          {"default", deflt}, {"decision", decision}};
}

std::string sitesText(const std::vector<Json> &sites) {
  std::string text;
  for (const Json &s : sites)
    text += s.dump() + "\n";
  return text;
}

std::string sitesError(const std::string &text, const DecisionSitesLimits &limits = {}) {
  TempDir tmp;
  writeFile(tmp / "m.sites.jsonl", text);
  auto sites = readDecisionSites(tmp / "m.sites.jsonl", limits);
  if (sites) {
    ADD_FAILURE() << "accepted: " << text.substr(0, 200);
    return "";
  }
  std::string message = llvm::toString(sites.takeError());
  EXPECT_NE(message.find(tmp / "m.sites.jsonl"), std::string::npos) << message;
  return message;
}

TEST(DecisionSites, ReadsEveryFieldInFileOrder) {
  TempDir tmp;
  Json noLoc = site("main", "helper", 1, false, false);
  noLoc["loc"] = nullptr;
  // The last line may lack its newline.
  writeFile(tmp / "s.jsonl", sitesText({site("main", "helper", 0, true), noLoc}) + site("f", "g", 0, true).dump());
  auto sites = readDecisionSites(tmp / "s.jsonl");
  ASSERT_TRUE(bool(sites)) << llvm::toString(sites.takeError());
  ASSERT_EQ(sites->size(), 3u);
  EXPECT_EQ((*sites)[0].Caller, "main");
  EXPECT_EQ((*sites)[0].Callee, "helper");
  EXPECT_EQ((*sites)[0].Site, 0u);
  EXPECT_EQ((*sites)[0].Location, "m.c:1:3");
  EXPECT_TRUE((*sites)[0].Default);
  EXPECT_TRUE((*sites)[0].Decision);
  EXPECT_EQ((*sites)[1].Location, std::nullopt);
  EXPECT_FALSE((*sites)[1].Default);
  EXPECT_FALSE((*sites)[1].Decision);
  EXPECT_EQ((*sites)[2].Caller, "f");
  EXPECT_EQ((*sites)[1].toJson(), noLoc);
}

// cost_margin is newer than the other keys: present (a number or null) or
// absent, and written back as read.
TEST(DecisionSites, TheCostMarginIsOptional) {
  TempDir tmp;
  Json margin = site("main", "helper", 0, true), certain = site("main", "helper", 1, true);
  margin["cost_margin"] = -12;
  certain["cost_margin"] = nullptr;
  writeFile(tmp / "s.jsonl", sitesText({margin, certain, site("f", "g", 0, true)}));
  auto sites = readDecisionSites(tmp / "s.jsonl");
  ASSERT_TRUE(bool(sites)) << llvm::toString(sites.takeError());
  ASSERT_EQ(sites->size(), 3u);
  EXPECT_EQ((*sites)[0].CostMargin, -12);
  EXPECT_TRUE((*sites)[1].HasCostMargin);
  EXPECT_EQ((*sites)[1].CostMargin, std::nullopt);
  EXPECT_FALSE((*sites)[2].HasCostMargin);
  EXPECT_EQ((*sites)[0].toJson(), margin);
  EXPECT_EQ((*sites)[1].toJson(), certain);
  EXPECT_EQ((*sites)[2].toJson(), site("f", "g", 0, true));
}

TEST(DecisionSites, HostileLinesAreErrorsNamingFileLineAndKey) {
  std::string good = site("main", "helper", 0, true).dump() + "\n";
  auto with = [&](const char *key, Json value) {
    Json s = site("main", "helper", 1, true);
    s[key] = std::move(value);
    return good + s.dump() + "\n";
  };
  EXPECT_NE(sitesError(with("caller", 7)).find("line 2: key 'caller' is not a string (it is a non-negative integer)"),
            std::string::npos);
  EXPECT_NE(sitesError(with("callee", nullptr)).find("line 2: key 'callee' is not a string (it is null)"),
            std::string::npos);
  EXPECT_NE(sitesError(with("site", -1)).find("line 2: key 'site' is not a non-negative integer (it is a negative"),
            std::string::npos);
  EXPECT_NE(sitesError(with("site", 1.5)).find("key 'site' is not a non-negative integer (it is a fractional"),
            std::string::npos);
  EXPECT_NE(sitesError(with("site", "1")).find("key 'site' is not a non-negative integer (it is string)"),
            std::string::npos);
  EXPECT_NE(sitesError(with("loc", 12)).find("key 'loc' is not a string or null"), std::string::npos);
  EXPECT_NE(sitesError(with("default", 1)).find("key 'default' is not a boolean"), std::string::npos);
  EXPECT_NE(sitesError(with("decision", "true")).find("key 'decision' is not a boolean"), std::string::npos);
  EXPECT_NE(sitesError(with("extra", 1)).find("line 2: key 'extra' is not a key of a decision site"),
            std::string::npos);
  EXPECT_NE(sitesError(with("cost_margin", "5")).find("line 2: key 'cost_margin' is not an integer or null"),
            std::string::npos);
  EXPECT_NE(sitesError(with("cost_margin", 2.5)).find("key 'cost_margin' is not an integer or null"),
            std::string::npos);
  Json missing = site("main", "helper", 1, true);
  missing.erase("decision");
  EXPECT_NE(sitesError(good + missing.dump() + "\n").find("line 2: key 'decision' is missing"), std::string::npos);
  EXPECT_NE(sitesError(good + "[1, 2]\n").find("line 2: not a JSON object (it is array)"), std::string::npos);
  EXPECT_NE(sitesError(good + "{\"caller\": \n").find("line 2: not JSON"), std::string::npos);
  EXPECT_NE(sitesError(good + "\n" + good).find("line 2: not JSON"), std::string::npos);
  // Invalid UTF-8 in a name.
  EXPECT_NE(sitesError(good + "{\"caller\": \"m\xff\xfe\", \"callee\": \"g\", \"site\": 0, \"loc\": null, "
                              "\"default\": true, \"decision\": true}\n")
                .find("line 2: not JSON"),
            std::string::npos);
  // A site named twice.
  EXPECT_NE(sitesError(good + good)
                .find("line 2: the site (caller 'main', callee 'helper', site 0) is already on "
                      "line 1"),
            std::string::npos);
  // Bounds: one huge line (never read whole), and a file over the limit.
  std::string huge = good + "{\"caller\": \"" + std::string(3 << 20, 'x') + "\"}\n";
  EXPECT_NE(sitesError(huge).find("line 2: longer than 1048576 bytes"), std::string::npos);
  DecisionSitesLimits small;
  small.MaxFileBytes = 100;
  EXPECT_NE(sitesError(good + good + good, small).find("more than the 100 a sites file may have"), std::string::npos);
  small = {};
  small.MaxLineBytes = 20;
  EXPECT_NE(sitesError(good, small).find("line 1: longer than 20 bytes"), std::string::npos);
}

TEST(DecisionSites, MissingFileIsAnErrorNamingIt) {
  TempDir tmp;
  auto sites = readDecisionSites(tmp / "none.sites.jsonl");
  ASSERT_FALSE(bool(sites));
  EXPECT_NE(llvm::toString(sites.takeError()).find(tmp / "none.sites.jsonl"), std::string::npos);
}

TEST(DecisionSites, ALinkOrAFifoIsRefusedNotFollowedOrWaitedOn) {
  TempDir tmp;
  writeFile(tmp / "elsewhere.jsonl",
            "{\"caller\":\"f\",\"callee\":\"g\",\"site\":0,\"loc\":null,\"default\":true,\"decision\":true}\n");
  ASSERT_EQ(::symlink((tmp / "elsewhere.jsonl").c_str(), (tmp / "link.sites.jsonl").c_str()), 0);
  auto linked = readDecisionSites(tmp / "link.sites.jsonl");
  ASSERT_FALSE(bool(linked));
  EXPECT_NE(llvm::toString(linked.takeError()).find("symbolic link"), std::string::npos);
  ASSERT_EQ(::mkfifo((tmp / "fifo.sites.jsonl").c_str(), 0600), 0);
  auto fifo = readDecisionSites(tmp / "fifo.sites.jsonl"); // would block in open() without O_NONBLOCK
  ASSERT_FALSE(bool(fifo));
  EXPECT_NE(llvm::toString(fifo.takeError()).find("not a regular file"), std::string::npos);
}

TEST(CompareHarvests, FlippedSitesByTheModulesGrowth) {
  TempDir tmp;
  std::string a = harvestDir(tmp, "a",
                             {record("lib/small", 1000), record("big", 1000), record("same", 500),
                              record("broken", 100), record("nolog", 10, "ok", 0)});
  std::string b = harvestDir(tmp, "b",
                             {record("lib/small", 1010), record("big", 1500), record("same", 500),
                              record("broken", 120), record("nolog", 10, "ok", 0)});
  writeFile(a + "/logs/lib/small.sites.jsonl", sitesText({site("f", "g", 0, true), site("f", "g", 1, true)}));
  writeFile(b + "/logs/lib/small.sites.jsonl", sitesText({site("f", "g", 0, false), site("f", "g", 1, true)}));
  writeFile(a + "/logs/big.sites.jsonl",
            sitesText({site("main", "h", 0, true), site("main", "k", 0, false), site("gone", "x", 0, true)}));
  writeFile(b + "/logs/big.sites.jsonl", sitesText({site("main", "k", 0, true), site("main", "h", 0, false),
                                                    site("new", "y", 0, true), site("new", "y", 1, true)}));
  writeFile(a + "/logs/same.sites.jsonl", sitesText({site("p", "q", 0, true)}));
  writeFile(b + "/logs/same.sites.jsonl", sitesText({site("p", "q", 0, true)}));
  writeFile(a + "/logs/broken.sites.jsonl", sitesText({site("p", "q", 0, true)}));
  writeFile(b + "/logs/broken.sites.jsonl", "{\"caller\": 1}\n");
  HarvestComparison c = compare(a, b);
  EXPECT_TRUE(c.SitesCompared) << c.SitesMessage;
  EXPECT_EQ(c.SitesModules, 4u); // big, lib/small, same, nolog (no log: no sites); not broken
  EXPECT_EQ(c.SitesMatched, 5u);
  EXPECT_EQ(c.SitesOnlyInA, 1u);
  EXPECT_EQ(c.SitesOnlyInB, 2u);
  ASSERT_EQ(c.FlippedSites.size(), 3u);
  // big grew 50%: first, in A's log order; then lib/small (+1%).
  EXPECT_EQ(c.FlippedSites[0].Module, "big");
  EXPECT_EQ(c.FlippedSites[0].A.Callee, "h");
  EXPECT_TRUE(c.FlippedSites[0].A.Decision);
  EXPECT_FALSE(c.FlippedSites[0].BDecision);
  EXPECT_EQ(c.FlippedSites[1].A.Callee, "k");
  EXPECT_EQ(c.FlippedSites[2].Module, "lib/small");
  EXPECT_EQ(c.FlippedSites[2].A.Site, 0u);
  EXPECT_EQ(c.FlippedSites[2].Sizes.BSize, 1010u);
  ASSERT_EQ(c.B.SitesProblems.size(), 1u);
  EXPECT_EQ(c.B.SitesProblems[0].first, "broken");
  EXPECT_NE(c.B.SitesProblems[0].second.find(b + "/logs/broken.sites.jsonl line 1: key 'callee' is missing"),
            std::string::npos)
      << c.B.SitesProblems[0].second;
  EXPECT_TRUE(c.A.SitesProblems.empty());

  Json j = comparisonJson(c, 20);
  ASSERT_EQ(j["flipped_sites"].size(), 3u);
  EXPECT_EQ(j["flipped_sites"][0], (Json{{"module", "big"},
                                         {"caller", "main"},
                                         {"callee", "h"},
                                         {"site", 0},
                                         {"loc", "m.c:1:3"},
                                         {"b_loc", "m.c:1:3"},
                                         {"default", true},
                                         {"a_decision", true},
                                         {"b_decision", false},
                                         {"module_a_size", 1000},
                                         {"module_b_size", 1500},
                                         {"module_change", 0.5}}));
  EXPECT_EQ(j["sites_problems"][0]["side"], "b");
  EXPECT_EQ(j["sites_problems"][0]["module"], "broken");

  // A module whose log promises sites that are not there is reported too.
  std::remove((a + "/logs/same.sites.jsonl").c_str());
  c = compare(a, b);
  ASSERT_EQ(c.A.SitesProblems.size(), 1u);
  EXPECT_NE(c.A.SitesProblems[0].second.find("same.sites.jsonl is missing"), std::string::npos);
  // A harvest without any sites file: said so, nothing compared, no failure;
  // with the reason its summary gives when it has one.
  c = compare(a, harvestDir(tmp, "plain", {record("big", 1500)}));
  EXPECT_FALSE(c.SitesCompared);
  EXPECT_NE(c.SitesMessage.find("B (" + tmp / "plain" + ") has no decision sites files"), std::string::npos)
      << c.SitesMessage;
  writeFile(tmp / "plain/summary.json",
            Json{{"shard", "0/1"},
                 {"problem", "inliner"},
                 {"compiler", "opt"},
                 {"mode", "interactive"},
                 {"policy", "default"},
                 {"decision_sites", {{"written", false}, {"reason", "no sites in interactive mode"}}}}
                .dump());
  c = compare(a, tmp / "plain");
  EXPECT_NE(c.SitesMessage.find("B (" + tmp / "plain" + ": no sites in interactive mode) has no decision sites"),
            std::string::npos)
      << c.SitesMessage;
  EXPECT_TRUE(c.FlippedSites.empty());
}

// HTML ------------------------------------------------------------------------

TEST(HtmlReport, EscapesEveryNameFromTheData) {
  EXPECT_EQ(htmlEscape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  TempDir tmp;
  const std::string evil = "<script>alert(1)</script>";
  std::string a = harvestDir(tmp, "a", {record(evil + "m", 100), record("f\"'&", 10, "failed")}, evil);
  std::string b = harvestDir(tmp, "b", {record(evil + "m", 200), record("f\"'&", 10)}, "<img src=x onerror=alert(2)>");
  writeFile(a + "/logs/" + evil + "m.sites.jsonl", sitesText({site(evil, evil, 0, true)}));
  writeFile(b + "/logs/" + evil + "m.sites.jsonl", sitesText({site(evil, evil, 0, false)}));
  HarvestComparison c = compare(a, b);
  ASSERT_EQ(c.FlippedSites.size(), 1u);
  std::string page = htmlReport(c, 20);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("f\"'&"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("<td>f&quot;&#39;&amp;</td>"), std::string::npos);
  // Self-contained: nothing is fetched, nothing runs.
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_NE(page.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("<table id=\"flipped\">"), std::string::npos);
}

TEST(HtmlReport, LongNamesAreShortenedAtACharacterBoundary) {
  TempDir tmp;
  // 55 ASCII bytes then multi-byte characters: the cut must not split one.
  std::string name = std::string(55, 'n') + "\xc3\xa9\xc3\xa9\xc3\xa9";
  std::string a = harvestDir(tmp, "a", {record(name, 100)});
  std::string b = harvestDir(tmp, "b", {record(name, 200)});
  std::string page = htmlReport(compare(a, b), 20);
  EXPECT_NE(page.find(std::string(55, 'n') + "\xe2\x80\xa6</text>"), std::string::npos);
  EXPECT_EQ(page.find(std::string(55, 'n') + "\xc3\xe2"), std::string::npos);
}

} // namespace
