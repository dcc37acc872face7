// Decisions that ship, end to end: a real multi-file C program built with
// clang-22 -Oz, line tables and embedded bitcode; a harvest-logs search
// over its corpus (--compiler=clang, its own command lines); export-decisions;
// then the program rebuilt from its sources with plain clang-22 -Oz and the
// exported file, once through the inliner plugin (decisions:FILE) and once
// through LLVM's own -cgscc-inline-replay. The rebuilt binaries must map
// what the searched program maps, byte for byte, and run the same.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LinkedImage.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>
#include <sys/stat.h>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Clang = MLGO_CLANG;
const std::string Plugin = std::string(MLGO_BIN_DIR) + "/../lib/mlgo-corpus/libMLGOInlineAdvisor.so";
const std::string BuildFlags = "-Oz -gline-tables-only";

class DecisionExport : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    auto sources = linkedProgramSources();
    sources.push_back({"gen", inlinerSource(8, 10)});
    makeEmbeddedBitcodeCorpus(Fixture->path(), sources, BuildFlags, ObjectListing::Directory);
  }
  static void TearDownTestSuite() {
    delete Fixture;
    Fixture = nullptr;
  }
  static std::string corpus() { return *Fixture / "corpus"; }
  // The build's directory: its compiles named their sources ../src/NAME.c.
  static std::string buildDir() { return *Fixture / "objs"; }
  static std::vector<std::string> modules() {
    return nlohmann::json::parse(readFile(corpus() + "/corpus_description.json"))["modules"];
  }
  static std::string stem(const std::string &module) { return module.substr(0, module.size() - 2); }

  static std::string linkFlag() { return "--link=" + quote(Clang + " -fuse-ld=lld {objects} -o {output}"); }

  // The program built from its sources with `flags` into DIR (objects
  // linked in the corpus' order, as the harvest links them); its path.
  std::string rebuild(const std::string &name, const std::string &flags) {
    std::string dir = Work / name;
    fs::create_directories(dir);
    std::string objects;
    for (const std::string &module : modules()) {
      std::string object = dir + "/" + module;
      CommandResult r = run(
          Clang + " " + BuildFlags + " " + flags + " -c ../src/" + stem(module) + ".c -o " + quote(object), buildDir());
      EXPECT_EQ(r.ExitCode, 0) << r.Err;
      objects += " " + quote(object);
    }
    std::string binary = dir + "/prog";
    mustRun(Clang + " -fuse-ld=lld" + objects + " -o " + quote(binary));
    return binary;
  }

  static std::string exportCommand(const std::string &harvest, const std::string &flags) {
    return tool("export-decisions") + " --harvest_dir=" + quote(harvest) + " --corpus=" + quote(corpus()) + " " + flags;
  }

  TempDir Work;
  static TempDir *Fixture;
};

TempDir *DecisionExport::Fixture = nullptr;

// The search from a random base keeps its improvements; its decisions depart
// from the default both ways, and both exports rebuild its program exactly.
TEST_F(DecisionExport, TheSearchedProgramRebuildsFromItsSourcesThroughThePluginAndThroughReplay) {
  std::string out = Work / "search";
  CommandResult r = run(harvestCommand(corpus(), out,
                                       "--num_workers=2 --compiler=clang --mode=plugin --policy=random:0.5:11 "
                                       "--explore=40 --explore_order=search:first " +
                                           linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  ASSERT_EQ(harvestSummary(out)["linked"]["status"], "ok");
  std::string searched = out + "/link/linked";

  std::string decisions = Work / "decisions.jsonl", remarks = Work / "remarks.txt", report = Work / "report.json";
  r = run(exportCommand(out, "--output=" + quote(decisions) + " --replay_remarks=" + quote(remarks) +
                                 " --report=" + quote(report)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json summary = nlohmann::json::parse(readFile(report));
  EXPECT_EQ(summary["modules"], modules().size()) << summary.dump(2);
  EXPECT_GT(summary["exported"]["inline"].get<int>(), 0) << summary.dump(2);
  EXPECT_GT(summary["exported"]["not_inline"].get<int>(), 0) << summary.dump(2);
  EXPECT_EQ(summary["replay"]["decisions_not_expressed"], 0) << summary.dump(2);
  EXPECT_EQ(summary["modules_not_exported"].size(), 0u) << summary.dump(2);
  EXPECT_EQ(summary["compiler"], "clang");
  std::string check = "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " ";
  std::string formats = std::string(MLGO_SOURCE_DIR) + "/corpus_formats/";
  mustRun(check + quote(formats + "export_decisions_report.schema.json") + " " + quote(report));
  mustRun(check + "--lines " + quote(formats + "inline_decisions.schema.json") + " " + quote(decisions));

  // The default's build differs: the decisions are what makes the program.
  std::string plain = rebuild("plain", "");
  EXPECT_FALSE(sameImage(plain, searched));

  std::string viaPlugin = rebuild("plugin", "-fpass-plugin=" + quote(Plugin) + " -mllvm " +
                                                quote("-mlgo-inliner-policy=decisions:" + decisions));
  EXPECT_TRUE(sameImage(viaPlugin, searched));
  std::string viaReplay = rebuild("replay", "-mllvm " + quote("-cgscc-inline-replay=" + remarks));
  EXPECT_TRUE(sameImage(viaReplay, searched));

  CommandResult expected = run(quote(plain));
  ASSERT_EQ(expected.ExitCode, 0);
  for (const std::string &binary : {searched, viaPlugin, viaReplay}) {
    CommandResult ran = run(quote(binary));
    EXPECT_EQ(ran.ExitCode, 0) << binary;
    EXPECT_EQ(ran.Out, expected.Out) << binary;
  }
}

// The default's own harvest exports nothing, and nothing changes.
TEST_F(DecisionExport, TheDefaultsHarvestExportsNoDecision) {
  std::string out = Work / "default";
  ASSERT_EQ(
      run(harvestCommand(corpus(), out, "--compiler=clang --mode=plugin --decision_sites " + linkFlag())).ExitCode, 0);
  std::string decisions = Work / "decisions.jsonl";
  CommandResult r = run(exportCommand(out, "--output=" + quote(decisions)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  size_t lines = 0;
  std::istringstream in(readFile(decisions));
  for (std::string line; std::getline(in, line); ++lines)
    EXPECT_EQ(nlohmann::json::parse(line)["decisions"].size(), 0u) << line;
  EXPECT_EQ(lines, modules().size());
  std::string viaPlugin = rebuild("plugin", "-fpass-plugin=" + quote(Plugin) + " -mllvm " +
                                                quote("-mlgo-inliner-policy=decisions:" + decisions));
  EXPECT_TRUE(sameImage(viaPlugin, out + "/link/linked"));
}

// A site the code no longer has: a warning names it, and the module is the
// default's. So is a module the file does not list.
TEST_F(DecisionExport, ASiteThatNoLongerExistsIsReportedAndTheDefaultDecides) {
  std::string decisions = Work / "stale.jsonl";
  writeFile(decisions, "{\"module\": \"util.o\", \"source_filename\": \"../src/util.c\", \"decisions\": "
                       "[{\"caller\": \"mix\", \"callee\": \"gone\", \"site\": 0, \"inline\": true}]}\n");
  std::string plain = Work / "plain.o", stale = Work / "stale.o", other = Work / "other.o";
  mustRun(Clang + " " + BuildFlags + " -c ../src/util.c -o " + quote(plain), buildDir());
  std::string flags =
      " -fpass-plugin=" + quote(Plugin) + " -mllvm " + quote("-mlgo-inliner-policy=decisions:" + decisions);
  CommandResult r = run(Clang + " " + BuildFlags + flags + " -c ../src/util.c -o " + quote(stale), buildDir());
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("1 of 1 decisions for ../src/util.c name call sites this compile did not reach"),
            std::string::npos)
      << r.Err;
  EXPECT_NE(r.Err.find("mix -> gone, site 0"), std::string::npos) << r.Err;
  auto text = [&](const std::string &object) {
    mustRun(std::string(MLGO_OBJCOPY) + " --dump-section=.text=" + quote(object + ".text") + " " + quote(object));
    return readFile(object + ".text");
  };
  EXPECT_EQ(text(stale), text(plain));

  r = run(Clang + " " + BuildFlags + flags + " -c ../src/vec.c -o " + quote(other), buildDir());
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("no module of the file is ../src/vec.c; this module follows the default heuristic"),
            std::string::npos)
      << r.Err;
}

// A malformed decisions file stops the compile with a message naming the
// file, the line and what is wrong; so does a FIFO (without hanging).
TEST_F(DecisionExport, AMalformedDecisionsFileIsAClearError) {
  struct Case {
    std::string Text, Expected;
  };
  const Case cases[] = {
      {"not json\n", "line 1: not JSON"},
      {"{\"module\": \"util.o\", \"source_filename\": \"../src/util.c\", \"decisions\": [], \"extra\": 1}\n",
       "line 1: key 'extra' is not a key of a module's decisions"},
      {"\n{\"module\": \"util.o\", \"source_filename\": \"../src/util.c\", \"decisions\": [{\"caller\": \"a\", "
       "\"callee\": \"b\", \"site\": -1, \"inline\": true}]}\n",
       "line 2: decision 0: 'site' must be a non-negative integer"},
      {"{\"module\": \"a.o\", \"source_filename\": \"x.c\", \"decisions\": []}\n"
       "{\"module\": \"a.o\", \"source_filename\": \"y.c\", \"decisions\": []}\n",
       "line 2: module a.o is already on line 1"},
  };
  int n = 0;
  for (const Case &c : cases) {
    std::string file = Work / ("bad" + std::to_string(n++) + ".jsonl");
    writeFile(file, c.Text);
    CommandResult r =
        run(Clang + " " + BuildFlags + " -fpass-plugin=" + quote(Plugin) + " -mllvm " +
                quote("-mlgo-inliner-policy=decisions:" + file) + " -c ../src/util.c -o " + quote(Work / "bad.o"),
            buildDir());
    EXPECT_NE(r.ExitCode, 0) << c.Text;
    EXPECT_NE(r.Err.find(file + " " + c.Expected), std::string::npos) << r.Err;
  }
  std::string fifo = Work / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  CommandResult r =
      run(Clang + " " + BuildFlags + " -fpass-plugin=" + quote(Plugin) + " -mllvm " +
              quote("-mlgo-inliner-policy=decisions:" + fifo) + " -c ../src/util.c -o " + quote(Work / "bad.o"),
          buildDir());
  EXPECT_NE(r.ExitCode, 0);
  EXPECT_NE(r.Err.find(fifo + ": not a regular file"), std::string::npos) << r.Err;
}

// The replay remarks leave out, and the report names, a decision whose
// replay key another logged site shares with the opposite decision, and one
// without a debug location; the plugin's file still carries both.
TEST_F(DecisionExport, WhatTheReplayCannotExpressIsReported) {
  std::string out = Work / "h";
  ASSERT_EQ(run(harvestCommand(corpus(), out, "--compiler=clang --mode=plugin --decision_sites")).ExitCode, 0);
  std::string path = out + "/logs/gen.o.sites.jsonl";
  std::vector<nlohmann::json> sites;
  std::istringstream in(readFile(path));
  for (std::string line; std::getline(in, line);)
    sites.push_back(nlohmann::json::parse(line));
  ASSERT_GE(sites.size(), 3u);
  // Site 0 departs from the default; site 1 has its key and the opposite
  // decision; site 2 departs too, without a debug location.
  nlohmann::json &a = sites[0], &b = sites[1], &c = sites[2];
  ASSERT_TRUE(a["replay_loc"].is_string());
  a["decision"] = !a["default"].get<bool>();
  b["callee"] = a["callee"];
  b["site"] = 999;
  b["replay_loc"] = a["replay_loc"];
  b["decision"] = a["default"];
  c["decision"] = !c["default"].get<bool>();
  c["replay_loc"] = nullptr;
  std::string text;
  for (const nlohmann::json &site : sites)
    text += site.dump() + "\n";
  writeFile(path, text);

  std::string decisions = Work / "d.jsonl", remarks = Work / "r.txt", report = Work / "report.json";
  CommandResult r = run(exportCommand(out, "--output=" + quote(decisions) + " --replay_remarks=" + quote(remarks) +
                                               " --report=" + quote(report)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json summary = nlohmann::json::parse(readFile(report));
  EXPECT_EQ(summary["exported"]["inline"].get<int>() + summary["exported"]["not_inline"].get<int>(), 2);
  EXPECT_EQ(summary["replay"]["decisions_not_expressed"], 2) << summary.dump(2);
  EXPECT_EQ(summary["replay"]["remarks"], 0) << summary.dump(2);
  ASSERT_EQ(summary["not_replayable"].size(), 2u) << summary.dump(2);
  EXPECT_NE(summary["not_replayable"][0]["reason"].get<std::string>().find("the opposite decision"), std::string::npos)
      << summary.dump(2);
  EXPECT_NE(summary["not_replayable"][1]["reason"].get<std::string>().find("no debug location"), std::string::npos)
      << summary.dump(2);
  EXPECT_EQ(readFile(remarks), "");
  EXPECT_NE(readFile(decisions).find("\"site\":0"), std::string::npos);
}

// export-decisions refuses what it cannot export: a harvest without decision
// sites, and a directory that is no harvest.
TEST_F(DecisionExport, ExportNeedsAHarvestWithDecisionSites) {
  std::string out = Work / "nosites";
  ASSERT_EQ(run(harvestCommand(corpus(), out, "--compiler=clang --mode=plugin")).ExitCode, 0);
  CommandResult r = run(exportCommand(out, "--output=" + quote(Work / "d.jsonl")));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("has no decision sites: harvest with --mode=plugin --decision_sites"), std::string::npos)
      << r.Err;
  EXPECT_FALSE(exists(Work / "d.jsonl"));
  r = run(exportCommand(Work.path(), "--output=" + quote(Work / "d.jsonl")));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("harvest.jsonl"), std::string::npos) << r.Err;

  // A module whose sites file is gone is not exported, and said so (exit
  // 3); the others are.
  std::string sites = Work / "sites";
  ASSERT_EQ(run(harvestCommand(corpus(), sites, "--compiler=clang --mode=plugin --decision_sites")).ExitCode, 0);
  fs::remove(sites + "/logs/util.o.sites.jsonl");
  std::string report = Work / "report.json";
  r = run(exportCommand(sites, "--output=" + quote(Work / "d.jsonl") + " --report=" + quote(report)));
  EXPECT_EQ(r.ExitCode, 3) << r.Err;
  EXPECT_NE(r.Err.find("not exported: util.o: " + sites + "/logs/util.o.sites.jsonl is missing"), std::string::npos)
      << r.Err;
  nlohmann::json summary = nlohmann::json::parse(readFile(report));
  ASSERT_EQ(summary["modules_not_exported"].size(), 1u) << summary.dump(2);
  EXPECT_EQ(summary["modules_not_exported"][0]["module"], "util.o");
  EXPECT_EQ(summary["modules"], modules().size() - 1);
}

} // namespace
