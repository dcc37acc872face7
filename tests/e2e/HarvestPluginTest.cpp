// harvest-logs --mode=plugin: libMLGOInlineAdvisor.so decides and logs inside
// the real opt-22 / clang-22. Its logs must equal the interactive host's byte
// for byte, its output the ordinary inliner's; auto mode must pick it only
// where it loads, and say why.
#include "mlgo/evaluate/NativeSize.h"

#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <sstream>
#include <sys/wait.h>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Clang = MLGO_CLANG;

// Templates, a recursive template chain, small inline and static functions
// and the standard library's sort: C++'s many small decisions.
std::string cppSource(int index, int functions) {
  std::string n = std::to_string(index);
  std::string s = "#include <algorithm>\n#include <vector>\nnamespace m" + n +
                  " {\n"
                  "template <int N> struct Chain { static int get(int x) { return Chain<N - 1>::get(x ^ N) * 3 + N; } "
                  "};\n"
                  "template <> struct Chain<0> { static int get(int x) { return x; } };\n"
                  "template <typename T> struct Box { T v; T get() const { return v; } void add(T d) { v += d; } };\n"
                  "template <typename T> T mix(T a, T b) { return (a * 31) ^ b; }\n";
  for (int f = 0; f < functions; ++f)
    s += "static int helper" + std::to_string(f) + "(int x) { return mix<int>(x, " + std::to_string(f + 1) + "); }\n";
  for (int f = 0; f < functions; ++f) {
    std::string k = std::to_string(f);
    s += "int run" + k + "(std::vector<int> &v, int x) { Box<long> b{x}; b.add(Chain<" + std::to_string(4 + f % 9) +
         ">::get(x)); std::sort(v.begin(), v.end()); return helper" + k + "(x) + helper" +
         std::to_string((f * 7 + 3) % functions) + "(x + 1) + static_cast<int>(b.get()); }\n";
  }
  return s + "}\n";
}

class HarvestPlugin : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    std::string d = Fixture->path();
    // -Oz IR before any LLVM pass, as corpora hold it: every call site is still there.
    const std::string flags = " -Oz -Xclang -disable-llvm-passes -emit-llvm -c ";
    fs::create_directories(d + "/bc");
    for (int i = 1; i <= 3; ++i) {
      std::string name = "cxx" + std::to_string(i);
      writeFile(d + "/src/" + name + ".cpp", cppSource(i, 12 * i));
      mustRun(Clang + " -x c++ -std=c++17" + flags + quote(d + "/src/" + name + ".cpp") + " -o " +
              quote(d + "/bc/" + name + ".bc"));
      name = "c" + std::to_string(i);
      writeFile(d + "/src/" + name + ".c", inlinerSource(20 * i, 30 * i, /*withDriver=*/false));
      mustRun(Clang + flags + quote(d + "/src/" + name + ".c") + " -o " + quote(d + "/bc/" + name + ".bc"));
    }
    mustRun(tool("make-corpus") + " -q --input_dir=" + quote(d + "/bc") + " --output_dir=" + quote(d + "/corpus") +
            " --default_args='-Oz -c'");
  }
  static void TearDownTestSuite() { delete Fixture; }
  static std::string corpus() { return *Fixture / "corpus"; }
  static std::vector<std::string> modules() { return {"c1", "c2", "c3", "cxx1", "cxx2", "cxx3"}; }

  std::string harvest(const std::string &out, const std::string &flags = "") {
    return harvestCommand(corpus(), out, flags);
  }

  // Every module's log equal in two runs, with decisions.
  void expectSameLogs(const std::string &a, const std::string &b) {
    auto ja = journalByModule(a), jb = journalByModule(b);
    for (const std::string &m : modules()) {
      ASSERT_EQ(ja[m]["status"], "ok") << m << ja[m].dump();
      ASSERT_EQ(jb[m]["status"], "ok") << m << jb[m].dump();
      EXPECT_GT(ja[m]["decisions"].get<size_t>(), 0u) << m;
      EXPECT_EQ(ja[m]["decisions"], jb[m]["decisions"]) << m;
      EXPECT_EQ(ja[m]["native_size"], jb[m]["native_size"]) << m;
      std::string la = readFile(a + "/logs/" + m + ".log"), lb = readFile(b + "/logs/" + m + ".log");
      EXPECT_FALSE(la.empty()) << m;
      EXPECT_TRUE(la == lb) << m << ": the logs differ (" << la.size() << " and " << lb.size() << " bytes)";
    }
  }

  static TempDir *Fixture;
  TempDir Work;
};
TempDir *HarvestPlugin::Fixture = nullptr;

TEST_F(HarvestPlugin, DefaultPolicyLogsAndBitcodeEqualTheInteractiveHostAndPlainOpt) {
  std::string plugin = Work / "plugin", interactive = Work / "interactive";
  CommandResult r = run(harvest(plugin, "--mode=plugin --num_workers=2 --explicit_temps_dir=" + quote(Work / "temps")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("using plugin mode (--mode=plugin)"), std::string::npos) << r.Err;
  mustRun(harvest(interactive, "--mode=interactive --num_workers=2"));
  expectSameLogs(plugin, interactive);
  size_t cxxDecisions = 0;
  for (const std::string &m : modules()) {
    // The plugin's optimized module is plain opt's, byte for byte.
    std::string plain = Work / (m + ".plain.bc");
    mustRun("opt-22 -passes='default<Oz>' " + quote(corpus() + "/" + m + ".bc") + " -o " + quote(plain));
    EXPECT_TRUE(readFile(plain) == readFile(Work / ("temps/" + m + "/optimized.bc"))) << m;
    if (m.starts_with("cxx"))
      cxxDecisions += journalByModule(plugin)[m]["decisions"].get<size_t>();
    // Readable by our reader, with the decision equal to the default.
    for (const LoggedObservation &o : readObservations(plugin + "/logs/" + m + ".log"))
      ASSERT_EQ(o["inlining_default"], o["inlining_decision"]) << m;
  }
  EXPECT_GT(cxxDecisions, 300u);
  nlohmann::json s = harvestSummary(plugin);
  EXPECT_EQ(s["mode"], "plugin");
  EXPECT_EQ(s["mode_reason"], "--mode=plugin");
  std::string formats = std::string(MLGO_SOURCE_DIR) + "/corpus_formats/";
  std::string check = "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " ";
  mustRun(check + quote(formats + "harvest_summary.schema.json") + " " + quote(plugin + "/summary.json"));
  mustRun(check + "--lines " + quote(formats + "harvest_journal.schema.json") + " " + quote(plugin + "/harvest.jsonl"));
}

TEST_F(HarvestPlugin, SeededRandomPolicyDecidesAsTheInteractiveHost) {
  std::string plugin = Work / "plugin", interactive = Work / "interactive";
  mustRun(harvest(plugin, "--mode=plugin --policy=random:0.3:11"));
  mustRun(harvest(interactive, "--mode=interactive --policy=random:0.3:11"));
  expectSameLogs(plugin, interactive);
  size_t differ = 0;
  for (const LoggedObservation &o : readObservations(plugin + "/logs/cxx2.log"))
    differ += o["inlining_default"] != o["inlining_decision"];
  EXPECT_GT(differ, 0u); // the random decisions are logged, not the default's
  auto j = journalByModule(plugin)["cxx2"];
  EXPECT_TRUE(j["reward"].is_number()) << j.dump();
  EXPECT_EQ(j["reward"], journalByModule(interactive)["cxx2"]["reward"]);
}

TEST_F(HarvestPlugin, ClangLoadsThePluginAndKeepsThePlainTextSize) {
  std::string plugin = Work / "plugin", interactive = Work / "interactive";
  CommandResult r = run(harvest(plugin, "--compiler=clang --explicit_temps_dir=" + quote(Work / "temps")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("using plugin mode (auto:"), std::string::npos) << r.Err;
  mustRun(harvest(interactive, "--compiler=clang --mode=interactive"));
  expectSameLogs(plugin, interactive);
  for (const std::string &m : modules()) {
    std::string plain = Work / (m + ".plain.o");
    mustRun(Clang + " -Oz -c -x ir " + quote(corpus() + "/" + m + ".bc") + " -o " + quote(plain));
    auto ours = berkeleyTextSize(Work / ("temps/" + m + "/native.o"));
    auto theirs = berkeleyTextSize(plain);
    ASSERT_TRUE(static_cast<bool>(ours) && static_cast<bool>(theirs));
    EXPECT_EQ(*ours, *theirs) << m;
  }
}

TEST_F(HarvestPlugin, AutoPicksThePluginAndFallsBackWithTheReason) {
  CommandResult r = run(harvest(Work / "auto", "--modules_filter=c1"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  // The first line says which mode and why.
  EXPECT_EQ(r.Err.find("INFO:root:compiler: opt-22 (LLVM 22), without development mode; using plugin mode (auto: "), 0u)
      << r.Err;
  EXPECT_EQ(harvestSummary(Work / "auto")["mode"], "plugin");

  // A compiler of another LLVM version: auto says why and runs interactively,
  // with the same log format.
  std::string other =
      writeScript(Work / "opt-21", "#!/bin/sh\n"
                                   "if [ \"$1\" = --version ]; then echo 'LLVM version 21.1.0'; exit 0; fi\n"
                                   "exec opt-22 \"$@\"\n");
  r = run(harvest(Work / "fallback", "--modules_filter=c1 --opt_path=" + quote(other)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("using interactive mode (auto: no plugin ("), std::string::npos) << r.Err;
  EXPECT_NE(r.Err.find("is LLVM 21 and the plugin is built for LLVM 22"), std::string::npos) << r.Err;
  EXPECT_NE(r.Err.find("WARNING"), std::string::npos) << r.Err;
  nlohmann::json s = harvestSummary(Work / "fallback");
  EXPECT_EQ(s["mode"], "interactive");
  EXPECT_NE(s["mode_reason"].get<std::string>().find("LLVM 21"), std::string::npos) << s.dump();
  EXPECT_TRUE(readFile(Work / "fallback/logs/c1.log") == readFile(Work / "auto/logs/c1.log"));

  // Asked for explicitly, the plugin is refused up front with that reason.
  r = run(harvest(Work / "refused", "--mode=plugin --opt_path=" + quote(other)));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("is LLVM 21 and the plugin is built for LLVM 22"), std::string::npos) << r.Err;

  // A plugin that does not load: auto falls back, naming the compiler's error.
  writeFile(Work / "libbroken.so", "not an ELF file");
  r = run(harvest(Work / "broken", "--modules_filter=c1 --plugin_path=" + quote(Work / "libbroken.so")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("using interactive mode (auto: no plugin (opt-22 with the plugin failed"), std::string::npos)
      << r.Err;
  // exec: policies stay on the interactive channel.
  std::string echo = std::string(MLGO_SOURCE_DIR) + "/scripts/echo_default_policy.py";
  r = run(harvest(Work / "exec", "--modules_filter=c1 --policy=exec:" + quote("/usr/bin/python3 " + echo)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("using interactive mode (auto: no plugin (exec: policies answer on the interactive channel))"),
            std::string::npos)
      << r.Err;
}

TEST_F(HarvestPlugin, FailuresInsideThePluginAreReportedPerModule) {
  // An unknown in-process policy: the plugin stops every compile with its reason.
  CommandResult r = run(harvest(Work / "unknown", "--mode=plugin --policy=nosuch:1 --modules_filter='c[0-9]'"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto j = journalByModule(Work / "unknown");
  ASSERT_EQ(j.size(), 3u);
  for (auto &[m, line] : j) {
    EXPECT_EQ(line["status"], "failed") << line.dump();
    EXPECT_EQ(line["reason"], "plugin_failed") << line.dump();
    EXPECT_NE(line["detail"].get<std::string>().find("unknown in-process inlining policy 'nosuch:1'"),
              std::string::npos)
        << line.dump();
  }
  // A plugin the compiler cannot load: every module says so.
  writeFile(Work / "libbroken.so", "not an ELF file");
  r = run(harvest(Work / "noload", "--mode=plugin --modules_filter=c1 --plugin_path=" + quote(Work / "libbroken.so")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  j = journalByModule(Work / "noload");
  EXPECT_EQ(j["c1"]["reason"], "plugin_failed") << j["c1"].dump();
  EXPECT_NE(j["c1"]["detail"].get<std::string>().find("Could not load library"), std::string::npos) << j["c1"].dump();

  // In auto mode such a policy is refused before any module runs.
  r = run(harvest(Work / "auto-unknown", "--policy=nosuch:1 --modules_filter='c[0-9]'"));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("runs only inside the compiler, and the plugin cannot be used"), std::string::npos) << r.Err;

  // A compiler that crashes while the plugin runs in it: that module fails, the others do not.
  std::string crashing = writeScript(Work / "crashing-opt", "#!/bin/bash\n"
                                                            "case \"$*\" in *c2.bc*) kill -SEGV $$;; esac\n"
                                                            "exec opt-22 \"$@\"\n");
  r = run(harvest(Work / "crash", "--mode=plugin --modules_filter='c[0-9]' --opt_path=" + quote(crashing)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  j = journalByModule(Work / "crash");
  EXPECT_EQ(j["c2"]["status"], "failed");
  EXPECT_EQ(j["c2"]["exit_status"], "signal 11 (Segmentation fault)");
  EXPECT_EQ(j["c1"]["status"], "ok");
  EXPECT_FALSE(exists(Work / "crash/logs/c2.log"));
}

TEST_F(HarvestPlugin, KillNineAndResumeEqualsACleanRun) {
  std::string clean = Work / "clean", out = Work / "out";
  mustRun(harvest(clean, "--mode=plugin --num_workers=1"));
  int status = killNineOnceJournaled(harvest(out, "--mode=plugin --num_workers=1"), out, std::chrono::milliseconds(5));
  ASSERT_TRUE(WIFSIGNALED(status));
  size_t doneBefore = harvestJournal(out).size();
  EXPECT_GE(doneBefore, 1u);
  EXPECT_LT(doneBefore, modules().size());
  CommandResult resumed = run(harvest(out, "--mode=plugin --num_workers=1"));
  ASSERT_EQ(resumed.ExitCode, 0) << resumed.Err;
  EXPECT_NE(resumed.Err.find("resuming: " + std::to_string(doneBefore)), std::string::npos) << resumed.Err;
  EXPECT_EQ(listTree(out + "/logs"), listTree(clean + "/logs"));
  for (const std::string &f : listTree(clean + "/logs"))
    EXPECT_TRUE(readFile(out + "/logs/" + f) == readFile(clean + "/logs/" + f)) << f;
  auto a = harvestJournalWithoutSeconds(out), b = harvestJournalWithoutSeconds(clean);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i], b[i]);
}

// Exploration on C and C++ modules (issue 34's correctness): every kept
// trajectory is what a fresh --policy=replay: harvest of its decisions
// gives, log byte for byte and native size, explored and replayed in plugin
// and in interactive mode, with opt and with clang.
TEST_F(HarvestPlugin, KeptTrajectoriesOfCAndCxxModulesEqualFreshReplays) {
  for (const std::string &setup :
       {std::string("--mode=plugin --compiler=opt"), std::string("--mode=interactive --compiler=opt"),
        std::string("--mode=plugin --compiler=clang")}) {
    std::string tag = std::to_string(std::hash<std::string>()(setup) % 1000);
    std::string out = Work / ("explored-" + tag), replayed = Work / ("replayed-" + tag), kept = out + ".kept.jsonl";
    CommandResult r =
        run(harvest(out, setup + " --num_workers=2 --policy=random:0.5:5 --explore=3 --explore_order=first"));
    ASSERT_EQ(r.ExitCode, 0) << setup << ": " << r.Err;
    std::string lines;
    std::map<std::string, nlohmann::json> keptOf;
    std::istringstream table(readFile(out + "/explore.jsonl"));
    for (std::string line; std::getline(table, line);) {
      nlohmann::json t = nlohmann::json::parse(line);
      if (t["kept"]) {
        keptOf[t["module"]] = t;
        lines += nlohmann::json{{"module", t["module"]}, {"decisions", t["decisions"]}}.dump() + "\n";
      }
    }
    ASSERT_EQ(keptOf.size(), modules().size()) << setup;
    EXPECT_GT(harvestSummary(out)["explore"]["improved"].get<int>(), 0) << setup << ": no flip won";
    writeFile(kept, lines);
    mustRun(harvest(replayed, setup + " --num_workers=2 --policy=replay:" + quote(kept)));
    auto fresh = journalByModule(replayed);
    for (const std::string &m : modules()) {
      ASSERT_EQ(fresh[m]["status"], "ok") << setup << " " << m << fresh[m].dump();
      EXPECT_EQ(fresh[m]["native_size"], keptOf[m]["native_size"]) << setup << " " << m;
      EXPECT_TRUE(readFile(out + "/logs/" + m + ".log") == readFile(replayed + "/logs/" + m + ".log"))
          << setup << " " << m << ": the kept log is not the replay's";
    }
  }
}

} // namespace
