// harvest-logs --problem=regalloc-*: the real clang-22/llc-22 on a corpus
// with enough register pressure for thousands of eviction decisions.
#include "mlgo/log/TrainingLog.h"

#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <set>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Clang = MLGO_CLANG;

// Three functions with more live doubles than x86-64's 16 vector registers.
std::string pressureSource(int module) {
  std::string s = "extern int ext(int);\n";
  for (int fn = 0; fn < 3; ++fn)
    s += pressureFunction("f" + std::to_string(fn), 24 + 8 * fn + 4 * module);
  return s;
}

class HarvestRegalloc : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    std::vector<std::pair<std::string, std::string>> sources;
    for (int m = 0; m < 3; ++m)
      sources.push_back({"r" + std::to_string(m), pressureSource(m)});
    // A module with no function bodies: llc never opens the channel.
    sources.push_back({"nobody", "int only_declared(int);\nint global = 3;\n"});
    makeEmbeddedBitcodeCorpus(Fixture->path(), sources, "-O2", ObjectListing::Directory);
  }
  static void TearDownTestSuite() { delete Fixture; }
  static std::string corpus() { return *Fixture / "corpus"; }
  std::string harvest(const std::string &out, const std::string &flags) { return harvestCommand(corpus(), out, flags); }
  std::string script(const std::string &name, const std::string &body) { return writeScript(Work / name, body); }

  static TempDir *Fixture;
  TempDir Work;
};
TempDir *HarvestRegalloc::Fixture = nullptr;

TEST_F(HarvestRegalloc, RandomEvictionsStayInsideTheMaskAndGetRewards) {
  std::string out = Work / "out";
  CommandResult r =
      run(harvest(out, "--problem=regalloc-evict --policy=random:0.5:1 --tfrecord=" + quote(out + "/ra.tfrecord")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto j = journalByModule(out);
  ASSERT_EQ(j.size(), 4u);
  size_t total = 0, records = 0;
  for (int m = 0; m < 3; ++m) {
    std::string name = "r" + std::to_string(m) + ".o";
    EXPECT_EQ(j[name]["status"], "ok") << j[name].dump();
    auto log = readObservations(out + "/logs/" + name + ".log");
    total += log.size();
    EXPECT_EQ(j[name]["decisions"], log.size());
    std::map<std::string, double> lastOutcome;
    double sum = 0;
    std::set<std::string> functions;
    for (const LoggedObservation &o : log) {
      const std::vector<double> &mask = o.Features.at("mask");
      ASSERT_EQ(mask.size(), 33u);
      ASSERT_EQ(mask[static_cast<size_t>(o["index_to_evict"])], 1) << name << " " << o.Context << " " << o.Index;
      ASSERT_TRUE(o.Outcome.has_value()); // every observation has an outcome
      sum += *o.Outcome;
      functions.insert(o.Context);
    }
    records += functions.size();
    // The reward is on each function's last observation; the rest are 0.
    for (size_t i = 0; i + 1 < log.size(); ++i)
      if (log[i].Context == log[i + 1].Context) {
        EXPECT_EQ(*log[i].Outcome, 0.0);
      }
    EXPECT_GT(sum, 0.0);
    EXPECT_NEAR(sum, j[name]["regalloc_score"].get<double>(), 0.5);
  }
  EXPECT_GT(total, 2000u) << "enough register pressure for thousands of eviction decisions";

  // The module without bodies: done quickly, no decisions, no log; resume skips it.
  EXPECT_EQ(j["nobody.o"]["status"], "ok");
  EXPECT_EQ(j["nobody.o"]["decisions"], 0);
  EXPECT_EQ(j["nobody.o"]["streams"], 0);
  EXPECT_LT(j["nobody.o"]["seconds"].get<double>(), 5);
  EXPECT_FALSE(exists(out + "/logs/nobody.o.log"));
  CommandResult again = run(harvest(out, "--problem=regalloc-evict --policy=random:0.5:1"));
  EXPECT_NE(again.Err.find("resuming: 4 of 4"), std::string::npos) << again.Err;

  // One record per function.
  CommandResult decoded =
      run("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/decode_sequence_examples.py") + " " +
          quote(out + "/ra.tfrecord"));
  ASSERT_EQ(decoded.ExitCode, 0) << decoded.Err;
  auto dataset = nlohmann::json::parse(decoded.Out);
  EXPECT_EQ(dataset.size(), records);
  EXPECT_EQ(dataset[0]["mask"][0].size(), 33u);
  EXPECT_TRUE(dataset[0].contains("index_to_evict"));
  EXPECT_TRUE(dataset[0].contains("reward"));
}

TEST_F(HarvestRegalloc, PriorityRepliesAreFloats) {
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--problem=regalloc-priority --policy=random:1:3 --modules_filter=r0"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto log = readObservations(out + "/logs/r0.o.log");
  ASSERT_GT(log.size(), 100u);
  for (const LoggedObservation &o : log) {
    EXPECT_EQ(o["priority"], std::floor(o["priority"]));
    EXPECT_GE(o["priority"], 0);
    EXPECT_LT(o["priority"], 1 << 20);
  }
  auto reader = TrainingLogReader::open(out + "/logs/r0.o.log");
  ASSERT_TRUE(static_cast<bool>((*reader)->next()));
  EXPECT_EQ((*reader)->header().Features.back().Name, "priority");
  EXPECT_EQ((*reader)->header().Features.back().Type, ElementType::Float);
}

TEST_F(HarvestRegalloc, ExecPoliciesAreCheckedAgainstTheMask) {
  // A policy that reads the stream and picks the first valid column.
  std::string reader = R"(
import json, struct, sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
feats = []
while True:
    line = inp.readline()
    if not line: break
    rec = json.loads(line)
    if "features" in rec: feats = rec["features"]
    elif "observation" in rec:
        vals = {}
        for f in feats:
            n = 1
            for d in f["shape"]: n *= d
            size = {"int64_t": 8, "float": 4}[f["type"]]
            raw = inp.read(size * n)
            vals[f["name"]] = struct.unpack("<%d%s" % (n, "q" if f["type"] == "int64_t" else "f"), raw)
        inp.read(1)
        out.write(struct.pack("<q", CHOICE(vals["mask"])))
        out.flush()
)";
  auto policy = [&](const std::string &name, const std::string &choice) {
    std::string body = reader;
    body.replace(body.find("CHOICE"), 6, choice);
    return "/usr/bin/python3 " + script(name, body);
  };
  std::string first = policy("first.py", "(lambda m: m.index(1))");
  CommandResult ok =
      run(harvest(Work / "first", "--problem=regalloc-evict --modules_filter=r0 --policy=exec:" + quote(first)));
  ASSERT_EQ(ok.ExitCode, 0) << ok.Err;
  EXPECT_EQ(journalByModule(Work / "first")["r0.o"]["status"], "ok") << journalByModule(Work / "first")["r0.o"].dump();
  EXPECT_GT(readObservations(Work / "first/logs/r0.o.log").size(), 50u);

  // Out-of-range and masked-out replies are never sent: the module fails cleanly.
  for (const char *choice : {"(lambda m: 33)", "(lambda m: -1)", "(lambda m: m.index(0))"}) {
    std::string bad = policy("bad.py", choice);
    std::string out = Work / "bad";
    fs::remove_all(out);
    mustRun(harvest(out, "--problem=regalloc-evict --modules_filter=r0 --compilation_timeout=20 --policy=exec:" +
                             quote(bad)));
    auto j = journalByModule(out)["r0.o"];
    EXPECT_EQ(j["reason"], "policy_error") << choice << j.dump();
    EXPECT_NE(j["detail"].get<std::string>().find("which the mask forbids"), std::string::npos) << j.dump();
    EXPECT_LT(j["seconds"].get<double>(), 10);
    EXPECT_EQ(j["exit_status"].get<std::string>().find("Segmentation"), std::string::npos) << j.dump();
  }
}

TEST_F(HarvestRegalloc, LlcOnOptimizedModules) {
  // --compiler=llc takes modules that are already optimized IR.
  std::string bc = Work / "bc";
  fs::create_directories(bc);
  mustRun(Clang + " -O2 -c -emit-llvm " + quote(*Fixture / "src/r1.c") + " -o " + quote(bc + "/r1.bc"));
  mustRun(tool("make-corpus") + " -q --input_dir=" + quote(bc) + " --output_dir=" + quote(Work / "corpus"));
  std::string out = Work / "out";
  CommandResult r =
      run(harvestCommand(Work / "corpus", out, "--problem=regalloc-evict --compiler=llc --policy=random:0.5"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_GT(journalByModule(out)["r1"]["decisions"].get<int>(), 100);
}

// Default eviction traces need the compiler's default decision: the
// interactive channel sends none; --mode=auto takes the regalloc plugin on a
// stock LLVM (no development mode), where it is built for that LLVM.
TEST_F(HarvestRegalloc, DefaultPolicyNeedsDevelopmentModeOrThePluginWhichAutoPicks) {
  CommandResult r = run(harvest(Work / "o", "--problem=regalloc-evict --mode=interactive"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("default regalloc traces need a development-mode (TFLite) LLVM"), std::string::npos) << r.Err;
  CommandResult automatic = run(harvest(Work / "auto", "--problem=regalloc-evict"));
  ASSERT_EQ(automatic.ExitCode, 0) << automatic.Err;
  EXPECT_EQ(harvestSummary(Work / "auto")["mode"], "plugin") << harvestSummary(Work / "auto").dump();
  size_t logs = 0;
  for (const auto &[module, record] : journalByModule(Work / "auto")) {
    EXPECT_EQ(record["status"], "ok") << record.dump();
    logs += record["log_written"].get<bool>();
  }
  EXPECT_GT(logs, 0u);
  // Another LLVM's plugin (here: none at all) is not taken: the old error.
  CommandResult missing = run(harvest(Work / "m", "--problem=regalloc-evict --plugin_path=" + quote(Work / "none.so")));
  EXPECT_EQ(missing.ExitCode, 1) << missing.Err;
  EXPECT_EQ(run(harvest(Work / "o", "--problem=regalloc-evict --compiler=opt --policy=random:0.5")).ExitCode, 2);
}

// Default priority traces: as for eviction, the plugin, which --mode=auto
// takes on a stock LLVM; the journal's regalloc_score is the sum of the
// log's per-function rewards (LLVM's RegAllocScore), with a --tfrecord record
// per function.
TEST_F(HarvestRegalloc, DefaultPriorityTracesComeFromThePluginWhichAutoPicks) {
  CommandResult r = run(harvest(Work / "o", "--problem=regalloc-priority --mode=interactive"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("the regalloc plugin (--mode=plugin)"), std::string::npos) << r.Err;
  for (const std::string mode : {"auto", "plugin"}) {
    std::string out = Work / mode;
    r = run(harvest(out, "--problem=regalloc-priority --policy=default --mode=" + mode +
                             " --tfrecord=" + quote(out + "/p.tfrecord")));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    nlohmann::json summary = harvestSummary(out);
    EXPECT_EQ(summary["mode"], "plugin") << summary.dump();
    if (mode == "auto")
      EXPECT_NE(summary.dump().find("default priority traces"), std::string::npos) << summary.dump();
    auto journal = journalByModule(out);
    ASSERT_EQ(journal.size(), 4u);
    size_t functions = 0;
    for (int m = 0; m < 3; ++m) {
      std::string name = "r" + std::to_string(m) + ".o";
      ASSERT_EQ(journal[name]["status"], "ok") << journal[name].dump();
      auto log = readObservations(out + "/logs/" + name + ".log");
      ASSERT_GT(log.size(), 100u) << name;
      EXPECT_EQ(journal[name]["decisions"], log.size());
      double sum = 0;
      std::set<std::string> seen;
      for (size_t i = 0; i < log.size(); ++i) {
        ASSERT_TRUE(log[i].Outcome.has_value());
        EXPECT_TRUE(std::isfinite(log[i]["priority"]));
        if (i + 1 < log.size() && log[i].Context == log[i + 1].Context)
          EXPECT_EQ(*log[i].Outcome, 0.0);
        sum += *log[i].Outcome;
        seen.insert(log[i].Context);
      }
      functions += seen.size();
      EXPECT_GT(sum, 0.0) << name;
      EXPECT_NEAR(journal[name]["regalloc_score"].get<double>(), sum, 1e-3) << name;
    }
    EXPECT_EQ(journal["nobody.o"]["status"], "ok");
    EXPECT_EQ(journal["nobody.o"]["decisions"], 0);
    EXPECT_FALSE(exists(out + "/logs/nobody.o.log"));
    CommandResult decoded =
        run("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/decode_sequence_examples.py") + " " +
            quote(out + "/p.tfrecord"));
    ASSERT_EQ(decoded.ExitCode, 0) << decoded.Err;
    auto dataset = nlohmann::json::parse(decoded.Out);
    EXPECT_EQ(dataset.size(), functions);
    EXPECT_TRUE(dataset[0].contains("priority"));
    EXPECT_TRUE(dataset[0].contains("li_size"));
    EXPECT_TRUE(dataset[0].contains("reward"));
  }
  // exec: policies stay on the interactive channel.
  r = run(harvest(Work / "exec", "--problem=regalloc-priority --policy=exec:cat --mode=plugin"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("the register allocator's plugin hosts only --policy=default, random:P[:SEED] and tflite:DIR"),
            std::string::npos)
      << r.Err;
}

// random:P:SEED hosted by the regalloc plugin (--mode=plugin) decides as
// harvest-logs' interactive host: per module, the same observations byte for
// byte (features, decisions, contexts, where the rewards go) and the same
// objects. The rewards themselves differ by definition: the plugin's are
// LLVM's RegAllocScore, the interactive host's the remarks proxy.
TEST_F(HarvestRegalloc, PluginHostedRandomPoliciesDecideAsTheInteractiveHost) {
  // llc takes optimized IR (the embedded bitcode is clang's input to its
  // optimizer); clang's objects embed their command line (.llvmcmd, which
  // names the mode's own flags), compared without it.
  std::string bc = Work / "bc", llcCorpus = Work / "llc-corpus";
  fs::create_directories(bc);
  for (int m = 0; m < 3; ++m)
    mustRun(Clang + " -O2 -c -emit-llvm " + quote(*Fixture / ("src/r" + std::to_string(m) + ".c")) + " -o " +
            quote(bc + "/r" + std::to_string(m) + ".bc"));
  mustRun(tool("make-corpus") + " -q --input_dir=" + quote(bc) + " --output_dir=" + quote(llcCorpus));
  auto object = [&](const std::string &path) {
    std::string stripped = path + ".nocmd";
    mustRun("llvm-objcopy-22 --remove-section=.llvmcmd " + quote(path) + " " + quote(stripped));
    return readFile(stripped);
  };
  for (const std::string compiler : {"clang", "llc"})
    for (const std::string problem : {"regalloc-evict", "regalloc-priority"}) {
      std::string tag = compiler + "/" + problem + " ", plugin = Work / (compiler + problem + "-plugin"),
                  interactive = Work / (compiler + problem + "-interactive");
      std::string flags = "--problem=" + problem + " --compiler=" + compiler + " --policy=random:0.5:11";
      std::string in = compiler == "llc" ? llcCorpus : corpus();
      CommandResult p =
          run(harvestCommand(in, plugin, flags + " --mode=plugin --explicit_temps_dir=" + quote(plugin + "-temps")));
      ASSERT_EQ(p.ExitCode, 0) << tag << p.Err;
      EXPECT_EQ(harvestSummary(plugin)["mode"], "plugin") << tag;
      CommandResult i = run(harvestCommand(
          in, interactive, flags + " --mode=interactive --explicit_temps_dir=" + quote(interactive + "-temps")));
      ASSERT_EQ(i.ExitCode, 0) << tag << i.Err;
      auto jp = journalByModule(plugin), ji = journalByModule(interactive);
      for (int m = 0; m < 3; ++m) {
        std::string name = "r" + std::to_string(m) + (compiler == "llc" ? "" : ".o");
        ASSERT_EQ(jp[name]["status"], "ok") << tag << jp[name].dump();
        ASSERT_EQ(ji[name]["status"], "ok") << tag << ji[name].dump();
        EXPECT_GT(jp[name]["decisions"].get<size_t>(), 100u) << tag << name;
        EXPECT_EQ(jp[name]["decisions"], ji[name]["decisions"]) << tag << name;
        EXPECT_EQ(jp[name]["native_size"], ji[name]["native_size"]) << tag << name;
        EXPECT_TRUE(object(plugin + "-temps/" + name + "/native.o") ==
                    object(interactive + "-temps/" + name + "/native.o"))
            << tag << name << ": the objects differ";
        std::string pluginLog = plugin + "/logs/" + name + ".log";
        std::string a = logWithoutRewards(pluginLog), b = logWithoutRewards(interactive + "/logs/" + name + ".log");
        EXPECT_FALSE(a.empty()) << tag << name;
        EXPECT_TRUE(a == b) << tag << name << ": the logs differ beyond their rewards";
        // The plugin's rewards: RegAllocScore per function, summed in the journal.
        double sum = 0;
        for (const LoggedObservation &o : readObservations(pluginLog))
          sum += o.Outcome.value_or(0);
        EXPECT_GT(sum, 0.0) << tag << name;
        EXPECT_NEAR(jp[name]["regalloc_score"].get<double>(), sum, 1e-3) << tag << name;
      }
    }
  EXPECT_EQ(journalByModule(Work / "clangregalloc-evict-plugin")["nobody.o"]["decisions"], 0);
  // Another seed decides otherwise (the seed reaches the plugin).
  std::string other = Work / "other-seed";
  ASSERT_EQ(
      run(harvest(other, "--problem=regalloc-evict --policy=random:0.5:12 --mode=plugin --modules_filter=r0")).ExitCode,
      0);
  EXPECT_FALSE(logWithoutRewards(other + "/logs/r0.o.log") ==
               logWithoutRewards(Work / "clangregalloc-evict-plugin/logs/r0.o.log"));
  // auto keeps random: on the interactive channel (its rewards stay the remarks proxy).
  std::string automatic = Work / "auto";
  ASSERT_EQ(run(harvest(automatic, "--problem=regalloc-evict --policy=random:0.5:11 --modules_filter=r0")).ExitCode, 0);
  EXPECT_EQ(harvestSummary(automatic)["mode"], "interactive") << harvestSummary(automatic).dump();
}

TEST_F(HarvestRegalloc, DevelopmentModeWithAFakeTFLiteClang) {
  LogHeader header;
  header.Features = {{"mask", ElementType::Int64, {1, 33}, 0}, {"index_to_evict", ElementType::Int64, {1}, 0}};
  header.Score = TensorSpec{"reward", ElementType::Float, {1}, 0};
  std::string prepared;
  {
    llvm::raw_string_ostream os(prepared);
    TrainingLogWriter writer(os, header);
    writer.switchContext("f0");
    std::vector<int64_t> mask(33, 1);
    int64_t decision = 32;
    float reward = 7.5f;
    ASSERT_FALSE(
        static_cast<bool>(writer.observation({llvm::StringRef(reinterpret_cast<const char *>(mask.data()), 33 * 8),
                                              llvm::StringRef(reinterpret_cast<const char *>(&decision), 8)})));
    ASSERT_FALSE(static_cast<bool>(writer.outcome(llvm::StringRef(reinterpret_cast<const char *>(&reward), 4))));
  }
  writeFile(Work / "prepared.log", prepared);
  std::string clang =
      script("fake-clang", "#!/bin/bash\n"
                           "case \"$1\" in --version) echo 'clang version 22.1.8'; exit 0;; esac\n"
                           "if [ \"$3\" = --help-hidden ]; then echo '  -regalloc-training-log=<string>'; exit 0; fi\n"
                           "echo \"$@\" > " +
                               quote(Work / "argv") +
                               "\n"
                               "for a in \"$@\"; do case \"$a\" in -regalloc-training-log=*) L=${a#*=};; esac; done\n"
                               "while [ $# -gt 0 ]; do case \"$1\" in -o) O=$2; shift;; esac; shift; done\n"
                               "cp " +
                               quote(Work / "prepared.log") + " \"$L\" && " + Clang + " -c -x c /dev/null -o \"$O\"\n");
  std::string out = Work / "out";
  // The fake records its argv outside its work directory: allowed explicitly.
  CommandResult r = run(harvest(out, "--problem=regalloc-evict --modules_filter=r0 --clang_path=" + quote(clang) +
                                         " --compiler_writable_dir=" + quote(Work.path())));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("using development mode"), std::string::npos) << r.Err;
  EXPECT_EQ(readFile(out + "/logs/r0.o.log"), prepared);
  std::string argv = readFile(Work / "argv");
  EXPECT_NE(argv.find("-mllvm -regalloc-enable-advisor=development -mllvm -regalloc-training-log="), std::string::npos)
      << argv;
}

} // namespace
