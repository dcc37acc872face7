// harvest-logs --link end to end: a real multi-file C program (a main and
// modules calling each other) built with clang-22 -Oz and embedded bitcode,
// extracted with extract-ir, harvested and linked with the real lld-22; fake
// linkers only where a fault must be injected (a failure, a hang).
#include "mlgo/support/Landlock.h"

#include "support/Deadline.h"
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LinkedImage.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Clang = MLGO_CLANG;

class HarvestLink : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    makeEmbeddedBitcodeCorpus(Fixture->path(), linkedProgramSources(), "-Oz", ObjectListing::Directory);
  }
  static void TearDownTestSuite() {
    delete Fixture;
    Fixture = nullptr;
  }
  static std::string corpus() { return *Fixture / "corpus"; }
  static std::string objects() { return *Fixture / "objs"; }

  // The corpus' modules, in its order (the default link order).
  static std::vector<std::string> modules() {
    return nlohmann::json::parse(readFile(corpus() + "/corpus_description.json"))["modules"];
  }

  std::string harvest(const std::string &out, const std::string &flags) {
    return harvestCommand(corpus(), out, "--num_workers=2 " + flags);
  }

  static std::string linkFlag(const std::string &extra = "") {
    return "--link=" + quote(Clang + " -fuse-ld=lld " + extra + " {objects} -o {output}");
  }

  TempDir Work;
  static TempDir *Fixture;
};

TempDir *HarvestLink::Fixture = nullptr;

TEST_F(HarvestLink, ClangModeLinksTheProgramItsBuildLinked) {
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--compiler=clang " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  ASSERT_EQ(linked["status"], "ok") << linked.dump(2);
  EXPECT_EQ(linked["objects"], modules().size());
  EXPECT_EQ(linked["order"], "corpus");

  // The program's own build, linked by hand in the same order.
  std::string own = Work / "own";
  std::string args;
  for (const std::string &module : modules())
    args += " " + quote(objects() + "/" + module);
  mustRun(Clang + " -fuse-ld=lld" + args + " -o " + quote(own));
  std::string binary = linked["output"];
  EXPECT_EQ(binary, out + "/link/linked");
  EXPECT_TRUE(sameImage(binary, own));

  // The sizes are llvm-size's.
  CommandResult size = run("llvm-size-22 " + quote(binary) + " | tail -1");
  ASSERT_EQ(size.ExitCode, 0) << size.Err;
  uint64_t text = 0, data = 0, bss = 0, dec = 0;
  ASSERT_EQ(std::sscanf(size.Out.c_str(), "%lu %lu %lu %lu", &text, &data, &bss, &dec), 4) << size.Out;
  EXPECT_EQ(linked["sizes"]["text"], text);
  EXPECT_EQ(linked["sizes"]["data"], data);
  EXPECT_EQ(linked["sizes"]["bss"], bss);
  EXPECT_EQ(linked["sizes"]["allocated"], dec);
  // The command as run, objects in link order.
  std::vector<std::string> command = linked["command"];
  ASSERT_GE(command.size(), modules().size() + 3);
  EXPECT_EQ(command[0], Clang);
  EXPECT_EQ(fs::path(command[2]).filename(), modules()[0] + ".o");
  EXPECT_EQ(command.back(), binary);

  // The objects waited for the link only.
  EXPECT_TRUE(fs::is_empty(out + "/.mlgo-harvest/objects"));
  std::string schema = std::string(MLGO_SOURCE_DIR) + "/corpus_formats/harvest_summary.schema.json";
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " " +
          quote(schema) + " " + quote(out + "/summary.json"));
}

TEST_F(HarvestLink, OptModeLinksWhatOptAndLlcMakeByHand) {
  std::string out = Work / "out";
  // llc's static relocation model: the link must not be PIE.
  CommandResult r = run(harvest(out, "--compiler=opt --keep_objects " + linkFlag("-no-pie")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  ASSERT_EQ(linked["status"], "ok") << linked.dump(2);
  std::string args;
  for (const std::string &module : modules()) {
    std::string bc = corpus() + "/" + module + ".bc", opt = Work / (module + ".opt.bc"), obj = Work / (module + ".o");
    mustRun("opt-22 '-passes=default<Oz>' " + quote(bc) + " -o " + quote(opt));
    mustRun("llc-22 -O2 -filetype=obj " + quote(opt) + " -o " + quote(obj));
    args += " " + quote(obj);
    // --keep_objects: still there, and the very objects llc makes.
    EXPECT_TRUE(readFile(out + "/.mlgo-harvest/objects/" + module + ".o") == readFile(obj)) << module;
  }
  std::string byHand = Work / "by-hand";
  mustRun(Clang + " -fuse-ld=lld -no-pie" + args + " -o " + quote(byHand));
  EXPECT_TRUE(sameImage(linked["output"], byHand));
  EXPECT_TRUE(readFile(linked["output"]) == readFile(byHand)); // the same objects: the same file
}

TEST_F(HarvestLink, OptModePieLinkFailsSayingWhy) {
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--compiler=opt " + linkFlag("-pie")));
  EXPECT_EQ(r.ExitCode, 4) << r.Err;
  EXPECT_NE(r.Err.find("add -no-pie to the template"), std::string::npos) << r.Err; // said before the compiles
  nlohmann::json linked = harvestSummary(out)["linked"];
  EXPECT_EQ(linked["status"], "failed");
  EXPECT_NE(linked["reason"].get<std::string>().find("link with -no-pie"), std::string::npos) << linked.dump(2);
  EXPECT_NE(linked["stderr_tail"].get<std::string>().find("recompile with -fPIC"), std::string::npos);
  // Kept for a rerun: a failed link leaves the objects.
  EXPECT_EQ(std::distance(fs::directory_iterator(out + "/.mlgo-harvest/objects"), fs::directory_iterator()),
            static_cast<long>(modules().size()));
}

TEST_F(HarvestLink, DefaultAndRandomPolicyBinariesRunAlike) {
  std::string byDefault = Work / "default", byRandom = Work / "random";
  for (auto [out, policy] : {std::pair{byDefault, "default"}, std::pair{byRandom, "random:0.5:7"}}) {
    CommandResult r = run(harvest(out, "--compiler=clang --policy=" + std::string(policy) + " " + linkFlag()));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    ASSERT_EQ(harvestSummary(out)["linked"]["status"], "ok") << harvestSummary(out).dump(2);
  }
  // Another inlining, the same program.
  EXPECT_FALSE(readFile(byDefault + "/link/linked") == readFile(byRandom + "/link/linked"));
  CommandResult a = run(quote(byDefault + "/link/linked"));
  CommandResult b = run(quote(byRandom + "/link/linked"));
  ASSERT_EQ(a.ExitCode, 0) << a.Err;
  ASSERT_EQ(b.ExitCode, 0) << b.Err;
  EXPECT_NE(a.Out.find("sum "), std::string::npos) << a.Out;
  EXPECT_EQ(a.Out, b.Out);
}

// --explore with --link: the program linked is the kept trajectories' (the
// binary a fresh --policy=replay: harvest of them links, byte for byte in
// what it maps), the base's link is kept beside it for comparison, and the
// rounds' objects are gone.
TEST_F(HarvestLink, AnExplorationLinksItsKeptTrajectories) {
  std::string out = Work / "explored", base = Work / "base", replayed = Work / "replayed";
  const std::string flags = "--compiler=clang --mode=plugin --policy=random:0.5:7 ";
  CommandResult r = run(harvest(out, flags + "--explore=3 --explore_order=first " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  mustRun(harvest(base, flags + linkFlag()));
  nlohmann::json summary = harvestSummary(out), linked = summary["explore"]["linked"];
  ASSERT_EQ(summary["linked"]["status"], "ok") << summary.dump(2);
  EXPECT_EQ(linked["base"], harvestSummary(base)["linked"]["sizes"]) << linked.dump();
  EXPECT_EQ(linked["kept"], summary["linked"]["sizes"]) << linked.dump();
  ASSERT_GT(summary["explore"]["improved"].get<int>(), 0) << "no kept trajectory differs from the base";
  EXPECT_NE(linked["kept"], linked["base"]);
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " " +
          quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/harvest_summary.schema.json") + " " +
          quote(out + "/summary.json"));
  EXPECT_DOUBLE_EQ(linked["text_change"].get<double>(),
                   linked["kept"]["text"].get<double>() / linked["base"]["text"].get<double>() - 1);

  std::string lines;
  std::istringstream table(readFile(out + "/explore.jsonl"));
  for (std::string line; std::getline(table, line);) {
    nlohmann::json t = nlohmann::json::parse(line);
    if (t["kept"])
      lines += nlohmann::json{{"module", t["module"]}, {"decisions", t["decisions"]}}.dump() + "\n";
  }
  writeFile(Work / "kept.jsonl", lines);
  mustRun(harvest(replayed,
                  "--compiler=clang --mode=plugin --policy=replay:" + quote(Work / "kept.jsonl") + " " + linkFlag()));
  EXPECT_EQ(harvestSummary(replayed)["linked"]["sizes"], linked["kept"]);
  EXPECT_TRUE(sameImage(out + "/link/linked", replayed + "/link/linked"));
  CommandResult program = run(quote(out + "/link/linked"));
  EXPECT_EQ(program.ExitCode, 0) << program.Err;
  EXPECT_EQ(program.Out, run(quote(base + "/link/linked")).Out);
  // Objects go once linked (no --keep_objects), the rounds' too.
  EXPECT_FALSE(fs::exists(out + "/.mlgo-harvest/objects") && !fs::is_empty(out + "/.mlgo-harvest/objects"));
  for (int round = 1; round <= 3; ++round)
    EXPECT_FALSE(fs::exists(out + "/explore/round-" + std::to_string(round) + "/.mlgo-harvest/objects")) << round;
}

// Killed (SIGKILL, as the OOM killer or a node failure would) at every point
// of its commit, from the staging of its result to its last written file,
// an exploration run again ends as an uninterrupted one: the same
// explore.jsonl, profiles, logs, journal records, summary counts and linked
// sizes. (Before the commit was staged whole, a kill after the first kept
// log was installed made the rerun explore on from the kept trajectories
// as if they were the base's: improved 0, profile_pol equal to profile_max.)
TEST_F(HarvestLink, KilledAtEveryPointOfItsCommitItEndsAsAnUninterruptedRun) {
  std::string out = Work / "out";
  std::string flags =
      "--compiler=clang --mode=plugin --policy=random:0.5:7 --explore=3 --explore_order=first " + linkFlag();
  // What a run that is never killed leaves, in the same directory (its files name it).
  struct Ending {
    std::string Table, ProfileMax, ProfilePol;
    std::map<std::string, std::string> Logs;
    std::map<std::string, nlohmann::json> Records;
    nlohmann::json Explore, Linked;
    std::string ProgramRuns; // what the linked program prints
  };
  auto ending = [&] {
    Ending e;
    e.Table = readFile(out + "/explore.jsonl");
    e.ProfileMax = readFile(out + "/profile_max.json");
    e.ProfilePol = readFile(out + "/profile_pol.json");
    for (auto &[module, record] : journalByModule(out)) {
      e.Records[module] = {record["status"], record["native_size"], record["decisions"], record["log_written"]};
      e.Logs[module] = record["log_written"] == true ? readFile(out + "/logs/" + module + ".log") : "";
    }
    nlohmann::json summary = harvestSummary(out);
    e.Explore = summary["explore"];
    e.Explore.erase("forked"); // what this run took from fork chains: a resumed round takes none
    e.Linked = summary["linked"]["sizes"];
    e.ProgramRuns = run(quote(out + "/link/linked")).Out;
    return e;
  };
  mustRun(harvest(out, flags));
  Ending clean = ending();
  ASSERT_GT(clean.Explore["improved"].get<int>(), 0) << "nothing kept differs from the base: nothing to install";
  EXPECT_FALSE(fs::exists(out + "/explore/commit"));

  // The base harvest and the rounds once, killed as the commit begins; each
  // point below resumes a copy of that (no compile is done again).
  std::string seed = Work / "seed";
  fs::remove_all(out);
  CommandResult first = run("env MLGO_EXPLORE_KILL_AT=1 " + harvest(out, flags));
  ASSERT_EQ(first.ExitCode, 128 + SIGKILL) << first.Err;
  fs::rename(out, seed);
  int points = 0;
  for (int at = 1; at < 64; ++at) {
    fs::remove_all(out);
    fs::copy(seed, out, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    CommandResult killed = run("env MLGO_EXPLORE_KILL_AT=" + std::to_string(at) + " " + harvest(out, flags));
    if (killed.ExitCode == 0) {
      points = at - 1; // it ran past the last point
      break;
    }
    ASSERT_EQ(killed.ExitCode, 128 + SIGKILL) << "point " << at << ": " << killed.Err;
    // Until it is finished, the readers of a harvest refuse it: its logs and
    // journal may disagree.
    if (fs::exists(out + "/explore/commit")) {
      CommandResult read = run(tool("training-log") + " trajectories " + quote(out));
      EXPECT_NE(read.ExitCode, 0) << "point " << at;
      EXPECT_NE(read.Err.find("killed while it installed its result"), std::string::npos) << read.Err;
      EXPECT_NE(run(tool("compare-harvests") + " " + quote(out) + " " + quote(out)).ExitCode, 0) << "point " << at;
    }
    CommandResult again = run(harvest(out, flags));
    ASSERT_EQ(again.ExitCode, 0) << "point " << at << ": " << again.Err;
    Ending e = ending();
    EXPECT_EQ(e.Table, clean.Table) << "point " << at;
    EXPECT_EQ(e.ProfileMax, clean.ProfileMax) << "point " << at;
    EXPECT_EQ(e.ProfilePol, clean.ProfilePol) << "point " << at;
    for (const auto &[m, log] : clean.Logs)
      EXPECT_TRUE(e.Logs[m] == log) << "point " << at << ": " << m;
    EXPECT_EQ(e.Records, clean.Records) << "point " << at;
    EXPECT_EQ(e.Explore, clean.Explore) << "point " << at;
    EXPECT_EQ(e.Linked, clean.Linked) << "point " << at;
    EXPECT_EQ(e.ProgramRuns, clean.ProgramRuns) << "point " << at;
    EXPECT_FALSE(fs::exists(out + "/explore/commit")) << "point " << at;
  }
  // A complete exploration is not explored again.
  EXPECT_EQ(run(harvest(out, flags)).ExitCode, 2);
  // Staging (3), one per installed log, the journal, the link, the table, the profiles, the summary.
  EXPECT_GE(points, 8 + clean.Explore["improved"].get<int>());
}

// A commit's plan is read as data from someone else: one that asks for more
// rounds than ran (the loop over them would not end) or whose lists and
// counts disagree is refused, naming the file.
TEST_F(HarvestLink, AHostileCommitPlanIsRefused) {
  std::string out = Work / "out";
  std::string flags =
      "--compiler=clang --mode=plugin --policy=random:0.5:7 --explore=3 --explore_order=first " + linkFlag();
  CommandResult killed = run("env MLGO_EXPLORE_KILL_AT=5 " + harvest(out, flags));
  ASSERT_EQ(killed.ExitCode, 128 + SIGKILL) << killed.Err;
  std::string plan = out + "/explore/commit/plan.json";
  ASSERT_TRUE(fs::exists(plan));
  std::string saved = readFile(plan);
  for (auto edit : std::vector<std::function<void(nlohmann::json &)>>{
           [](nlohmann::json &j) { j["rounds"] = 4294967295u; },
           [](nlohmann::json &j) { j["rounds"] = 18446744073709551615u; },
           [](nlohmann::json &j) { j["result"]["improved"] = 99; },
           [](nlohmann::json &j) {
             j["improved"].push_back({{"module", "../../etc"}, {"round", 1}});
           }}) {
    nlohmann::json j = nlohmann::json::parse(saved);
    edit(j);
    writeFile(plan, j.dump());
    CommandResult r = run("timeout 60 " + harvest(out, flags));
    EXPECT_EQ(r.ExitCode, 1) << j.dump() << r.Err;
    EXPECT_NE(r.Err.find(plan), std::string::npos) << r.Err;
  }
  writeFile(plan, saved);
  CommandResult r = run(harvest(out, flags));
  EXPECT_EQ(r.ExitCode, 0) << r.Err;
}

// The linker's memory bound stays within a lower hard limit the run was
// given (setting a soft limit above it failed every link).
TEST_F(HarvestLink, ALowerHardMemoryLimitIsKept) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "AddressSanitizer's shadow memory counts against RLIMIT_DATA: an instrumented harvest-logs cannot "
                  "start under one";
#endif
#endif
  std::string out = Work / "out";
  CommandResult r = run("bash -c " + quote("ulimit -d 6000000 && " + harvest(out, "--compiler=clang " + linkFlag())));
  EXPECT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(harvestSummary(out)["linked"]["status"], "ok") << harvestSummary(out)["linked"].dump(2);
}

TEST_F(HarvestLink, LinkOrderFileSetsTheOrderAndUnknownNamesAreErrors) {
  std::vector<std::string> reversed = modules();
  std::reverse(reversed.begin(), reversed.end());
  std::string order;
  for (const std::string &m : reversed)
    order += m + "\n";
  writeFile(Work / "order.txt", order);
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--compiler=clang --link_order=" + quote(Work / "order.txt") + " " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  ASSERT_EQ(linked["status"], "ok") << linked.dump(2);
  EXPECT_EQ(linked["order"], Work / "order.txt");
  std::vector<std::string> command = linked["command"];
  for (size_t i = 0; i < reversed.size(); ++i)
    EXPECT_EQ(fs::path(command[2 + i]).filename(), reversed[i] + ".o");

  writeFile(Work / "bad.txt", order + "nosuch.o\n");
  r = run(harvest(Work / "bad", "--compiler=clang --link_order=" + quote(Work / "bad.txt") + " " + linkFlag()));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("'nosuch.o', is not a module of the corpus"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "bad/harvest.jsonl")); // refused before any compile

  writeFile(Work / "short.txt", reversed[0] + "\n");
  r = run(harvest(Work / "short", "--compiler=clang --link_order=" + quote(Work / "short.txt") + " " + linkFlag()));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("does not list module"), std::string::npos) << r.Err;
}

TEST_F(HarvestLink, ExtractIrRecordsTheOrderOfAParamsFileAndHarvestLinksInIt) {
  // The build's link order, unlike the corpus' other orders: vec, util, main, fib.
  std::vector<std::string> order = {"vec.o", "util.o", "main.o", "fib.o"};
  std::string params = "-o\nprog\n";
  for (const std::string &object : order)
    params += object + "\n";
  writeFile(Work / "link.params", params);
  std::string extracted = Work / "params-corpus";
  mustRun(tool("extract-ir") + " -q --input_type=params --input=" + quote(Work / "link.params") +
          " --obj_base_dir=" + quote(objects()) + " --output_dir=" + quote(extracted));
  nlohmann::json recorded = nlohmann::json::parse(readFile(extracted + "/link_order.json"));
  EXPECT_EQ(recorded["input_type"], "params");
  EXPECT_EQ(recorded["input"], Work / "link.params");
  EXPECT_EQ(recorded["modules"], order);
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " " +
          quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/link_order.schema.json") + " " +
          quote(extracted + "/link_order.json"));
  // The reference's manifest, nothing added to it.
  nlohmann::json manifest = nlohmann::json::parse(readFile(extracted + "/corpus_description.json"));
  EXPECT_EQ(manifest.size(), 2u) << manifest.dump();
  // A corpus whose manifest lists its modules in another order (a tool's,
  // a user's) still links in the recorded order.
  manifest["modules"] = {"fib.o", "main.o", "util.o", "vec.o"};
  writeFile(extracted + "/corpus_description.json", manifest.dump(2));

  std::string out = Work / "out";
  CommandResult r = run(harvestCommand(extracted, out, "--compiler=clang " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  ASSERT_EQ(linked["status"], "ok") << linked.dump(2);
  EXPECT_EQ(linked["order"], extracted + "/link_order.json");
  std::string own = Work / "own", args;
  for (const std::string &object : order)
    args += " " + quote(objects() + "/" + object);
  mustRun(Clang + " -fuse-ld=lld" + args + " -o " + quote(own));
  EXPECT_TRUE(sameImage(linked["output"], own));

  // Inputs that are no link record none (the suite's corpus is a directory's).
  EXPECT_FALSE(exists(corpus() + "/link_order.json"));
}

TEST_F(HarvestLink, CorpusOfALinkedBinaryRelinksIntoThatBinary) {
  std::string args;
  for (const std::string &object : {"util.o", "fib.o", "main.o", "vec.o"})
    args += " " + quote(objects() + "/" + object);
  std::string program = Work / "prog";
  mustRun(Clang + " -fuse-ld=lld" + args + " -o " + quote(program));
  std::string extracted = Work / "binary-corpus";
  mustRun(tool("extract-ir") + " -q --input_type=binary --input=" + quote(program) +
          " --output_dir=" + quote(extracted));
  nlohmann::json recorded = nlohmann::json::parse(readFile(extracted + "/link_order.json"));
  EXPECT_EQ(recorded["input_type"], "binary");
  ASSERT_EQ(recorded["modules"].size(), 4u) << recorded.dump();
  EXPECT_NE(recorded["modules"][0].get<std::string>().find("util"), std::string::npos) << recorded.dump();
  EXPECT_NE(recorded["modules"][3].get<std::string>().find("vec"), std::string::npos) << recorded.dump();
  // The manifest in another order again: the recorded one wins.
  nlohmann::json manifest = nlohmann::json::parse(readFile(extracted + "/corpus_description.json"));
  std::vector<std::string> modules = manifest["modules"];
  std::reverse(modules.begin(), modules.end());
  manifest["modules"] = modules;
  writeFile(extracted + "/corpus_description.json", manifest.dump(2));

  std::string out = Work / "out";
  CommandResult r = run(harvestCommand(extracted, out, "--compiler=clang " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  ASSERT_EQ(linked["status"], "ok") << linked.dump(2);
  EXPECT_TRUE(sameImage(linked["output"], program));
  // Once extracted again from a directory, the corpus has no recorded order.
  mustRun(tool("extract-ir") + " -q --input_type=directory --input=" + quote(objects()) +
          " --output_dir=" + quote(extracted));
  EXPECT_FALSE(exists(extracted + "/link_order.json"));
}

TEST_F(HarvestLink, PolicyBatchLinksEveryPolicyAgainstTheDefaultsLink) {
  std::string out = Work / "batch";
  CommandResult r = run(harvest(out, "--compiler=clang --policies=random:0.5:7,default " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json evaluation = nlohmann::json::parse(readFile(out + "/evaluation.json"));
  ASSERT_EQ(evaluation["policies"].size(), 2u);
  std::vector<nlohmann::json> summaries = {harvestSummary(out + "/policies/0"), harvestSummary(out + "/policies/1")};
  for (size_t k = 0; k < 2; ++k) {
    nlohmann::json linked = evaluation["policies"][k]["linked"];
    ASSERT_EQ(linked["status"], "ok") << linked.dump(2);
    EXPECT_EQ(linked["text"], summaries[k]["linked"]["sizes"]["text"]);
    EXPECT_EQ(linked["allocated"], summaries[k]["linked"]["sizes"]["allocated"]);
    EXPECT_EQ(linked["baseline_policy_index"], 1); // the default, wherever it is in the list
  }
  double randomText = summaries[0]["linked"]["sizes"]["text"], defaultText = summaries[1]["linked"]["sizes"]["text"];
  EXPECT_DOUBLE_EQ(evaluation["policies"][0]["linked"]["text_change"].get<double>(), randomText / defaultText - 1);
  EXPECT_NE(randomText, defaultText);
  EXPECT_EQ(evaluation["policies"][1]["linked"]["text_change"], 0.0);
  // One binary per policy, each the program.
  CommandResult a = run(quote(out + "/policies/0/link/linked")), b = run(quote(out + "/policies/1/link/linked"));
  EXPECT_EQ(a.ExitCode, 0);
  EXPECT_EQ(a.Out, b.Out);
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " " +
          quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/evaluation_summary.schema.json") + " " +
          quote(out + "/evaluation.json"));

  // Without a default policy there is no baseline: said, and no change.
  r = run(harvest(Work / "nodefault", "--compiler=clang --policies=random:0.5:7 " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("no linked `default` policy in the batch"), std::string::npos) << r.Err;
  evaluation = nlohmann::json::parse(readFile(Work / "nodefault/evaluation.json"));
  EXPECT_EQ(evaluation["policies"][0]["linked"]["status"], "ok");
  EXPECT_EQ(evaluation["policies"][0]["linked"]["baseline_policy_index"], nullptr);
  EXPECT_EQ(evaluation["policies"][0]["linked"]["text_change"], nullptr);

  // A policy whose link fails: the batch says so and exits 4.
  std::string linker = writeScript(Work / "bad-ld", "#!/bin/sh\nexit 1\n");
  r = run(harvest(Work / "bad", "--compiler=clang --policies=default --link=" + quote(linker + " {objects} {output}")));
  EXPECT_EQ(r.ExitCode, 4) << r.Err;
  evaluation = nlohmann::json::parse(readFile(Work / "bad/evaluation.json"));
  EXPECT_EQ(evaluation["policies"][0]["linked"]["status"], "failed");
  EXPECT_EQ(evaluation["policies"][0]["linked"]["text_change"], nullptr);
}

TEST_F(HarvestLink, CompareHarvestsShowsTheLinkedBinariesBesideTheTotals) {
  std::string a = Work / "default", b = Work / "random", plain = Work / "plain";
  mustRun(harvest(a, "--compiler=clang " + linkFlag()));
  mustRun(harvest(b, "--compiler=clang --policy=random:0.5:7 " + linkFlag()));
  mustRun(harvest(plain, "--compiler=clang --policy=random:0.5:7"));
  uint64_t textA = harvestSummary(a)["linked"]["sizes"]["text"], textB = harvestSummary(b)["linked"]["sizes"]["text"];
  ASSERT_NE(textA, textB);

  std::string compare = tool("compare-harvests");
  CommandResult r = run(compare + " " + quote(a) + " " + quote(b) + " --json=" + quote(Work / "c.json") +
                        " --html=" + quote(Work / "c.html"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  char change[32];
  std::snprintf(change, sizeof change, "%+.2f%%", (static_cast<double>(textB) / textA - 1) * 100);
  std::string expected = "linked binary: text A " + std::to_string(textA) + " bytes, B " + std::to_string(textB) +
                         " bytes, change " + change;
  EXPECT_NE(r.Out.find(expected), std::string::npos) << r.Out;
  // Beside the per-module total, right after it.
  EXPECT_LT(r.Out.find("native size over the"), r.Out.find("linked binary:")) << r.Out;
  nlohmann::json j = nlohmann::json::parse(readFile(Work / "c.json"));
  EXPECT_EQ(j["linked"]["a"]["text"], textA);
  EXPECT_EQ(j["linked"]["b"]["text"], textB);
  EXPECT_DOUBLE_EQ(j["linked"]["text_change"].get<double>(), static_cast<double>(textB) / textA - 1);
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " " +
          quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/compare_harvests.schema.json") + " " +
          quote(Work / "c.json"));
  std::string html = readFile(Work / "c.html");
  EXPECT_NE(html.find("<p id=\"linked\">Linked binary: text A " + std::to_string(textA)), std::string::npos);

  // Only one side linked: said, and no change computed.
  r = run(compare + " " + quote(a) + " " + quote(plain) + " --json=" + quote(Work / "d.json"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Out.find("linked binary: only A has a linked binary: B harvested without --link"), std::string::npos)
      << r.Out;
  j = nlohmann::json::parse(readFile(Work / "d.json"));
  EXPECT_EQ(j["linked"]["b"], nullptr);
  EXPECT_EQ(j["linked"]["text_change"], nullptr);
  r = run(compare + " " + quote(plain) + " " + quote(plain));
  EXPECT_NE(r.Out.find("neither harvest has a linked binary"), std::string::npos) << r.Out;
}

TEST_F(HarvestLink, BaselineCacheKeepsTheDefaultsLinkedSize) {
  std::string cache = Work / "cache", a = Work / "default", b = Work / "random";
  mustRun(harvest(a, "--compiler=clang --baseline_cache=" + quote(cache) + " " + linkFlag()));
  nlohmann::json stored = harvestSummary(a)["linked"];
  ASSERT_EQ(stored["status"], "ok") << stored.dump(2);
  EXPECT_EQ(stored["baseline"]["status"], "stored") << stored.dump(2);
  EXPECT_EQ(stored["baseline"]["text_change"], 0.0);

  // A random policy's link is compared with it without relinking the default.
  mustRun(harvest(b, "--compiler=clang --policy=random:0.5:7 --baseline_cache=" + quote(cache) + " " + linkFlag()));
  nlohmann::json linked = harvestSummary(b)["linked"];
  ASSERT_EQ(linked["status"], "ok") << linked.dump(2);
  nlohmann::json baseline = linked["baseline"];
  EXPECT_EQ(baseline["status"], "cached") << baseline.dump(2);
  EXPECT_EQ(baseline["text"], stored["sizes"]["text"]);
  EXPECT_EQ(baseline["allocated"], stored["sizes"]["allocated"]);
  EXPECT_DOUBLE_EQ(baseline["text_change"].get<double>(),
                   linked["sizes"]["text"].get<double>() / stored["sizes"]["text"].get<double>() - 1);
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " " +
          quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/harvest_summary.schema.json") + " " +
          quote(b + "/summary.json"));

  // Another template is another link: not in the cache.
  mustRun(harvest(Work / "other", "--compiler=clang --policy=random:0.5:7 --baseline_cache=" + quote(cache) + " " +
                                      linkFlag("-Wl,--gc-sections")));
  baseline = harvestSummary(Work / "other")["linked"]["baseline"];
  EXPECT_EQ(baseline["status"], "absent");
  EXPECT_NE(baseline["reason"].get<std::string>().find("has no default-policy link"), std::string::npos);
  EXPECT_EQ(baseline["text_change"], nullptr);
}

TEST_F(HarvestLink, RunningAgainLinksAgain) {
  std::string out = Work / "out";
  mustRun(harvest(out, "--compiler=clang " + linkFlag()));
  fs::copy_file(out + "/link/linked", Work / "first");
  // The objects went after the link: the modules are compiled again for it.
  CommandResult r = run(harvest(out, "--compiler=clang " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json summary = harvestSummary(out);
  EXPECT_EQ(summary["linked"]["status"], "ok") << summary.dump(2);
  EXPECT_EQ(summary["modules"]["skipped_done"], 0);
  EXPECT_NE(r.Err.find("compiling again 4 modules"), std::string::npos) << r.Err;
  EXPECT_TRUE(sameImage(out + "/link/linked", Work / "first"));

  // Kept objects: nothing to compile, the link is made from them.
  std::string kept = Work / "kept";
  mustRun(harvest(kept, "--compiler=clang --keep_objects " + linkFlag()));
  r = run(harvest(kept, "--compiler=clang --keep_objects " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  summary = harvestSummary(kept);
  EXPECT_EQ(summary["modules"]["skipped_done"], modules().size());
  EXPECT_EQ(summary["linked"]["status"], "ok") << summary.dump(2);
  EXPECT_TRUE(sameImage(kept + "/link/linked", Work / "first"));

  // --explicit_temps_dir keeps the work directories whole: the object is copied.
  std::string temps = Work / "temps";
  mustRun(harvest(Work / "explicit", "--compiler=clang --explicit_temps_dir=" + quote(temps) + " " + linkFlag()));
  EXPECT_EQ(harvestSummary(Work / "explicit")["linked"]["status"], "ok");
  EXPECT_TRUE(exists(temps + "/" + modules()[0] + "/native.o"));
}

TEST_F(HarvestLink, TemplateWithoutObjectsOrOutputIsAUsageError) {
  for (const std::string &bad : {Clang + " -o {output}", Clang + " {objects} -o a.out",
                                 Clang + " x{objects} -o {output}", std::string("{objects} {output}")}) {
    CommandResult r = run(harvest(Work / "out", "--link=" + quote(bad)));
    EXPECT_EQ(r.ExitCode, 2) << bad << "\n" << r.Err;
    EXPECT_NE(r.Err.find("--link: the template must"), std::string::npos) << r.Err;
  }
  CommandResult r = run(harvest(Work / "out", "--keep_objects"));
  EXPECT_EQ(r.ExitCode, 2) << r.Err;
  EXPECT_NE(r.Err.find("need --link"), std::string::npos) << r.Err;
  // Part of the program is no program.
  r = run(harvest(Work / "out", "--shard=0/2 " + linkFlag()));
  EXPECT_EQ(r.ExitCode, 2) << r.Err;
  EXPECT_NE(r.Err.find("a partial link would mislead"), std::string::npos) << r.Err;
  r = run(harvest(Work / "out", "--sampling_rate=0.5 " + linkFlag()));
  EXPECT_EQ(r.ExitCode, 2) << r.Err;
  EXPECT_NE(r.Err.find("is not the program"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "out/summary.json"));
}

TEST_F(HarvestLink, FailingLinkerIsReportedAndExitsNonZero) {
  std::string linker = writeScript(Work / "bad-ld", "#!/bin/sh\necho 'ld: error: undefined symbol: nowhere' >&2\n"
                                                    "exit 1\n");
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--compiler=clang --link=" + quote(linker + " {objects} -o {output}")));
  EXPECT_EQ(r.ExitCode, 4) << r.Err;
  nlohmann::json summary = harvestSummary(out);
  EXPECT_EQ(summary["modules"]["ok"], modules().size()); // the harvest itself is whole
  nlohmann::json linked = summary["linked"];
  EXPECT_EQ(linked["status"], "failed");
  EXPECT_EQ(linked["exit_status"], "exit 1");
  EXPECT_NE(linked["stderr_tail"].get<std::string>().find("undefined symbol: nowhere"), std::string::npos);
  EXPECT_FALSE(linked.contains("sizes"));
  // The same harvest without --link exits 0: only an asked-for link counts.
  r = run(harvest(Work / "plain", "--compiler=clang"));
  EXPECT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_FALSE(harvestSummary(Work / "plain").contains("linked"));
}

TEST_F(HarvestLink, HangingLinkerIsKilledAtTheTimeout) {
  std::string linker = writeScript(Work / "hang-ld", "#!/bin/sh\nsleep 300 & wait\n");
  std::string out = Work / "out";
  auto start = std::chrono::steady_clock::now();
  CommandResult r =
      run(harvest(out, "--compiler=clang --link_timeout=1 --link=" + quote(linker + " {objects} -o {output}")));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(100));
  EXPECT_EQ(r.ExitCode, 4) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  EXPECT_EQ(linked["status"], "timeout");
  EXPECT_NE(linked["reason"].get<std::string>().find("--link_timeout"), std::string::npos) << linked.dump(2);
  EXPECT_EQ(processesMentioning(Work / "hang-ld"), 0u); // the whole group is gone
}

TEST_F(HarvestLink, MissingExtraObjectIsNotLinked) {
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--compiler=clang --link_extra=" + quote(Work / "missing.o") + " " + linkFlag()));
  EXPECT_EQ(r.ExitCode, 4) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  EXPECT_EQ(linked["status"], "not_attempted");
  EXPECT_NE(linked["reason"].get<std::string>().find(Work / "missing.o"), std::string::npos) << linked.dump(2);
}

TEST_F(HarvestLink, ExtraObjectsAreLinkedAfterTheModules) {
  // A module without bitcode (an assembly source's object) that the program needs.
  writeFile(Work / "extra.s", ".globl extra_answer\nextra_answer:\n  movl $42, %eax\n  ret\n"
                              ".section .note.GNU-stack,\"\",@progbits\n");
  mustRun(Clang + " -c " + quote(Work / "extra.s") + " -o " + quote(Work / "extra.o"));
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--compiler=clang --link_extra=" + quote(Work / "extra.o") + " " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  ASSERT_EQ(linked["status"], "ok") << linked.dump(2);
  std::vector<std::string> command = linked["command"];
  EXPECT_EQ(command[2 + modules().size()], Work / "extra.o");
  EXPECT_EQ(linked["extra_objects"], nlohmann::json::array({Work / "extra.o"}));
}

TEST_F(HarvestLink, FailedModuleMeansNoLinkAndNamesIt) {
  // A copy of the corpus with one module's bitcode broken.
  std::string broken = Work / "corpus";
  fs::copy(corpus(), broken, fs::copy_options::recursive);
  std::string out = Work / "out";
  // An earlier, whole run's binary: it must not pass for this run's.
  mustRun(harvestCommand(broken, out, "--compiler=clang " + linkFlag()));
  ASSERT_TRUE(exists(out + "/link/linked"));
  std::string victim = modules()[1];
  writeFile(broken + "/" + victim + ".bc", "not bitcode");
  CommandResult r = run(harvestCommand(broken, out, "--force --compiler=clang " + linkFlag()));
  EXPECT_EQ(r.ExitCode, 4) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  EXPECT_EQ(linked["status"], "not_attempted");
  EXPECT_EQ(linked["modules_not_linkable"], nlohmann::json::array({victim + " (failed)"})) << linked.dump(2);
  EXPECT_FALSE(exists(out + "/link/linked"));
}

TEST_F(HarvestLink, LinkerMayWriteOnlyItsOutputDirectory) {
  if (landlockSupport().Abi < 1)
    GTEST_SKIP() << "no Landlock: " << landlockSupport().Problem;
  std::string escape = Work / "escaped";
  std::string linker = writeScript(Work / "sneaky-ld",
                                   "#!/bin/sh\necho x > " + quote(escape) + " || exit 7\nexec " + Clang + " \"$@\"\n");
  std::string out = Work / "out";
  CommandResult r =
      run(harvest(out, "--compiler=clang --link=" + quote(linker + " -fuse-ld=lld {objects} -o {output}")));
  EXPECT_EQ(r.ExitCode, 4) << r.Err;
  EXPECT_FALSE(exists(escape));
  EXPECT_EQ(harvestSummary(out)["linked"]["exit_status"], "exit 7");
}

// Every file below `dir` whose bytes hold `needle` (a secret that must not
// have been copied there).
std::vector<std::string> filesHolding(const std::string &dir, const std::string &needle) {
  std::vector<std::string> found;
  for (const auto &entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && !entry.is_symlink() &&
        readFile(entry.path().string()).find(needle) != std::string::npos)
      found.push_back(entry.path().string());
  return found;
}

// OUT/link planted as a link to a directory: the link step removes the link
// itself and links into a directory of its own; the directory it named keeps
// its files. (It was emptied, recursively, and the run exited 0.)
TEST_F(HarvestLink, ALinkPlantedAtOutLinkIsRemovedNotFollowed) {
  std::string out = Work / "out", elsewhere = Work / "elsewhere";
  fs::create_directories(elsewhere);
  writeFile(elsewhere + "/precious.txt", "keep me\n");
  fs::create_directories(out);
  fs::create_directory_symlink(elsewhere, out + "/link");
  CommandResult r = run(harvest(out, "--compiler=clang " + linkFlag()));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(elsewhere + "/precious.txt"), "keep me\n");
  EXPECT_EQ(listTree(elsewhere, true), (std::set<std::string>{"precious.txt"}));
  EXPECT_FALSE(fs::is_symlink(out + "/link"));
  EXPECT_TRUE(fs::is_regular_file(out + "/link/linked"));
}

// A staged object planted as a link to another file is never handed to the
// linker (which quoted the file's first line into summary.json): the resume
// compiles that module again, its object replaces the link, and the file
// it named reaches nothing under OUT.
TEST_F(HarvestLink, AStagedObjectPlantedAsALinkIsNeverHandedToTheLinker) {
  std::string out = Work / "out", secret = Work / "secret.txt";
  writeFile(secret, "SECRET-LINE-4711 of a file outside the corpus\n");
  std::string flags = "--compiler=clang --keep_objects " + linkFlag();
  mustRun(harvest(out, flags));
  std::string victim = modules()[0];
  std::string staged = out + "/.mlgo-harvest/objects/" + victim + ".o";
  ASSERT_TRUE(fs::is_regular_file(staged)) << staged;
  fs::remove(staged);
  fs::create_symlink(secret, staged);
  CommandResult r = run(harvest(out, flags));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("a symbolic link below"), std::string::npos) << r.Err;
  EXPECT_EQ(harvestSummary(out)["linked"]["status"], "ok");
  EXPECT_FALSE(fs::is_symlink(staged));
  EXPECT_EQ(filesHolding(out, "SECRET-LINE-4711"), std::vector<std::string>{});
  EXPECT_EQ(readFile(secret), "SECRET-LINE-4711 of a file outside the corpus\n");
}

// A module's #pragma comment(lib, ...) becomes a .deplibs section that lld
// honours by opening the file it names (quoting its first line in an error;
// /dev/zero allocated without end). Such an object is never linked: the
// link is not attempted, names the module and the section, and the named
// file's contents reach nothing under OUT; validate-corpus says so.
TEST_F(HarvestLink, AModuleNamingFilesForTheLinkerIsNotLinked) {
  std::string secret = Work / "secret.txt";
  writeFile(secret, "SECRET-LINE-0815 of a file outside the corpus\n");
  auto sources = linkedProgramSources();
  for (auto &[name, text] : sources)
    if (name == "fib")
      text = "#pragma comment(lib, \"" + secret + "\")\n" + text;
  std::string corpus = makeEmbeddedBitcodeCorpus(Work / "pragma", sources, "-Oz", ObjectListing::Directory);
  std::string out = Work / "out";
  CommandResult r = run(harvestCommand(corpus, out, "--compiler=clang " + linkFlag()));
  EXPECT_EQ(r.ExitCode, 4) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  EXPECT_EQ(linked["status"], "not_attempted") << linked.dump(2);
  ASSERT_EQ(linked["modules_not_linkable"].size(), 1u) << linked.dump(2);
  std::string named = linked["modules_not_linkable"][0];
  EXPECT_EQ(named.rfind("fib", 0), 0u) << named;
  EXPECT_NE(named.find(".deplibs"), std::string::npos) << named;
  EXPECT_FALSE(exists(out + "/link/linked"));
  EXPECT_EQ(filesHolding(out, "SECRET-LINE-0815"), std::vector<std::string>{});

  CommandResult validated = run(tool("validate-corpus") + " --json " + quote(corpus));
  EXPECT_NE(validated.ExitCode, 0) << validated.Out;
  nlohmann::json report = nlohmann::json::parse(validated.Out);
  EXPECT_FALSE(report["sound"].get<bool>());
  bool found = false;
  for (const nlohmann::json &p : report["problems"])
    found |= p["code"] == "linker_directives" && p["detail"].get<std::string>().find(secret) != std::string::npos;
  EXPECT_TRUE(found) << report.dump(2);
  // The same program without the pragma is sound.
  EXPECT_EQ(run(tool("validate-corpus") + " " + quote(HarvestLink::corpus())).ExitCode, 0);
}

// The linker reads only what it is allowed: a file the template's own
// linker script INCLUDEs from elsewhere is denied (the link fails saying
// why) until --compiler_readable_dir allows its directory.
TEST_F(HarvestLink, TheLinkerReadsOnlyItsAllowList) {
  if (landlockSupport().Abi < 1)
    GTEST_SKIP() << "no Landlock: " << landlockSupport().Problem;
  std::string outside = Work / "outside", scripts = Work / "scripts";
  fs::create_directories(outside);
  fs::create_directories(scripts);
  writeFile(outside + "/included.ld", "/* SECRET-LINE-1234 */\n");
  writeFile(scripts + "/main.ld", "INCLUDE \"" + outside + "/included.ld\"\n");
  std::string flags = "--compiler=clang " + linkFlag("-Wl,-T," + scripts + "/main.ld");
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, flags));
  EXPECT_EQ(r.ExitCode, 4) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  EXPECT_EQ(linked["status"], "failed") << linked.dump(2);
  EXPECT_NE(linked["stderr_tail"].get<std::string>().find("included.ld"), std::string::npos) << linked.dump(2);
  EXPECT_NE(linked["reason"].get<std::string>().find("may read only"), std::string::npos) << linked.dump(2);
  EXPECT_EQ(filesHolding(out, "SECRET-LINE-1234"), std::vector<std::string>{});
  r = run(harvest(Work / "allowed", flags + " --compiler_readable_dir=" + quote(outside)));
  EXPECT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(harvestSummary(Work / "allowed")["linked"]["status"], "ok");
}

// A linker that allocates without end fails at --link_memory_limit, and the
// link says so.
TEST_F(HarvestLink, TheLinkersMemoryIsBounded) {
  std::string linker = writeScript(Work / "hungry-ld", "#!/usr/bin/python3\nhoard = bytearray(3 << 30)\n");
  std::string out = Work / "out";
  CommandResult r =
      run(harvest(out, "--compiler=clang --link_memory_limit=256 --link=" + quote(linker + " {objects} -o {output}")));
  EXPECT_EQ(r.ExitCode, 4) << r.Err;
  nlohmann::json linked = harvestSummary(out)["linked"];
  EXPECT_EQ(linked["status"], "failed") << linked.dump(2);
  EXPECT_NE(linked["stderr_tail"].get<std::string>().find("MemoryError"), std::string::npos) << linked.dump(2);
  EXPECT_NE(linked["reason"].get<std::string>().find("--link_memory_limit=256"), std::string::npos) << linked.dump(2);
  EXPECT_NE(run(harvest(Work / "usage", "--link_memory_limit=256")).ExitCode, 0);
}

} // namespace
