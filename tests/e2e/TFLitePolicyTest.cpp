// The native TFLite evaluator against TFLite itself (the npm package
// @tensorflow/tfjs-tflite run with Node), on feature vectors the real
// opt-22/llc-22 produce; harvest-logs --policy=tflite:DIR end to end; and
// malformed models.
#include "mlgo/log/TrainingLog.h"
#include "mlgo/model/TFLiteModel.h"

#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Python = "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/tflite_models.py");
const std::string OracleScript = std::string(MLGO_SOURCE_DIR) + "/tests/e2e/tflite_oracle.js";
// scripts/test.sh installs the oracle here with npm; the test does so itself when it is missing.
const std::string OracleDir = MLGO_TFLITE_ORACLE_DIR;
const std::string WasmDir = OracleDir + "/node_modules/@tensorflow/tfjs-tflite/wasm";

// Two functions with more live doubles than x86-64's vector registers.
std::string pressureSource() { return pressureFunction("f0", 24) + pressureFunction("f1", 32); }

std::vector<nlohmann::json> jsonLines(const std::string &text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty())
      out.push_back(nlohmann::json::parse(l));
  return out;
}

// The log header's features as the model writer takes them.
void writeFeatures(const std::string &log, const std::string &path) {
  auto reader = TrainingLogReader::open(log);
  ASSERT_TRUE(static_cast<bool>(reader)) << log;
  ASSERT_TRUE(static_cast<bool>((*reader)->next()));
  nlohmann::json j;
  j["features"] = nlohmann::json::array();
  for (const TensorSpec &spec : (*reader)->header().Features)
    j["features"].push_back({{"name", spec.Name}, {"type", elementTypeName(spec.Type)}, {"shape", spec.Shape}});
  writeFile(path, j.dump());
}

// Observations of `logs` as JSON lines for both evaluators: every feature by
// name; the infinities and NaN JSON cannot hold as "inf", "-inf", "nan".
std::vector<LoggedObservation> writeObservations(const std::vector<std::string> &logs, const std::string &path) {
  std::vector<LoggedObservation> all;
  std::string text;
  for (const std::string &log : logs)
    for (LoggedObservation &o : readObservations(log)) {
      nlohmann::json j;
      for (const auto &[name, values] : o.Features) {
        nlohmann::json array = nlohmann::json::array();
        for (double v : values) {
          if (std::isnan(v))
            array.push_back("nan");
          else if (std::isinf(v))
            array.push_back(v > 0 ? "inf" : "-inf");
          else if (v == std::floor(v) && std::fabs(v) < 9e15)
            array.push_back(static_cast<int64_t>(v));
          else
            array.push_back(v);
        }
        j[name] = values.size() == 1 ? array[0] : array;
      }
      text += j.dump() + "\n";
      all.push_back(std::move(o));
    }
  writeFile(path, text);
  return all;
}

std::vector<double> values(const nlohmann::json &v) {
  if (v.is_array()) {
    std::vector<double> out;
    for (const auto &x : v)
      out.push_back(x.get<double>());
    return out;
  }
  return {v.get<double>()};
}

// A deadline for every tool the tests below start on hostile models, and for
// mlgo-policy a cap on its address space: an unbounded allocation fails the
// test (bad_alloc, exit 134) instead of swapping. mlgo-policy itself needs
// about 250 MiB of address space (shared libLLVM), harvest-logs and opt-22
// (which the limit also binds) less than 512 MiB; a model may add 64 MiB.
std::string bounded(const std::string &command, int seconds = 120) {
  return "timeout -k 5 " + std::to_string(seconds) + " " + command;
}
// Under ASan (which reserves terabytes of shadow address space) the bound is
// on the resident set instead, with oversized allocations failing as
// bad_alloc as they do without it.
std::string boundedMemory(const std::string &command, int mebibytes = 512) {
  if (sanitizerBuild())
    return "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=" + std::to_string(mebibytes) +
           ":allocator_may_return_null=1:quarantine_size_mb=16 " + bounded(command);
  return bounded("prlimit --as=" + std::to_string(static_cast<int64_t>(mebibytes) << 20) + " " + command);
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-4 + 1e-4 * std::fabs(b); }

// Is the arg-max of `logits` decided by less than the tolerance?
bool nearTie(const std::vector<double> &logits) {
  if (logits.size() < 2)
    return false;
  std::vector<double> sorted = logits;
  std::sort(sorted.rbegin(), sorted.rend());
  return sorted[0] - sorted[1] <= 1e-4 + 1e-4 * std::fabs(sorted[0]);
}

class TFLitePolicy : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    std::string d = Fixture->path();
    makeEmbeddedBitcodeCorpus(d, {{"m1", inlinerSource(20, 25)}, {"m2", inlinerSource(40, 50)}}, "-Oz",
                              ObjectListing::Directory);
    makeEmbeddedBitcodeCorpus(d, {{"r", pressureSource()}}, "-O2", ObjectListing::Directory, "r");
    // Real feature vectors: the default inliner, and random evictions.
    mustRun(harvest(d + "/corpus", d + "/default", "--policy=default"));
    mustRun(harvest(d + "/rcorpus", d + "/random", "--problem=regalloc-evict --policy=random:0.5:7"));
    writeFeatures(d + "/default/logs/m1.o.log", d + "/inliner_features.json");
    writeFeatures(d + "/random/logs/r.o.log", d + "/evict_features.json");
    writeObservations({d + "/default/logs/m1.o.log", d + "/default/logs/m2.o.log"}, d + "/inliner_obs.jsonl");
    writeObservations({d + "/random/logs/r.o.log"}, d + "/evict_obs.jsonl");
  }
  static void TearDownTestSuite() { delete Fixture; }

  static std::string harvest(const std::string &corpus, const std::string &out, const std::string &flags) {
    return harvestCommand(corpus, out, "--num_workers=2 " + flags);
  }
  static std::string dir(const std::string &rel) { return *Fixture / rel; }

  // Writes the policy KIND to DIR (features of the inliner or eviction log).
  static std::string model(const std::string &kind, bool evict = false, int seed = 1) {
    std::string out = dir("models/" + kind + "." + std::to_string(seed));
    if (!exists(out + "/model.tflite"))
      mustRun(Python + " " + kind + " " + quote(dir(evict ? "evict_features.json" : "inliner_features.json")) + " " +
              quote(out) + " --seed " + std::to_string(seed));
    return out;
  }

  // Installs the oracle if needed; false (with the reason) when npm cannot.
  static bool oracleReady(std::string &why) {
    if (exists(WasmDir + "/tflite_web_api_cc.wasm"))
      return true;
    fs::create_directories(OracleDir);
    std::string install = "test -f " + quote(WasmDir + "/tflite_web_api_cc.wasm") +
                          " || timeout 300 npm install --no-audit --no-fund --silent --prefix " + quote(OracleDir) +
                          " @tensorflow/tfjs-tflite@0.0.1-alpha.10 @tensorflow/tfjs-core@4.9.0";
    CommandResult r = run("flock " + quote(OracleDir + "/.lock") + " sh -c " + quote(install) + " 2>&1");
    if (exists(WasmDir + "/tflite_web_api_cc.wasm"))
      return true;
    why = "the TFLite oracle (npm @tensorflow/tfjs-tflite) is not installed in " + OracleDir +
          " and npm could not install it: " + r.Out + r.Err;
    return false;
  }

  static std::vector<nlohmann::json> oracle(const std::string &modelDir, const std::string &observations) {
    CommandResult r = run("node " + quote(OracleScript) + " " + quote(WasmDir) + " " +
                          quote(modelDir + "/oracle.tflite") + " " + quote(observations));
    EXPECT_EQ(r.ExitCode, 0) << r.Err;
    return jsonLines(r.Out);
  }

  static std::vector<nlohmann::json> ours(const std::string &modelDir, const std::string &observations) {
    CommandResult r = run(tool("mlgo-policy") + " eval " + quote(modelDir) + " --observations " + quote(observations));
    EXPECT_EQ(r.ExitCode, 0) << r.Err;
    return jsonLines(r.Out);
  }

  struct Agreement {
    size_t Compared = 0, Ties = 0, TiesDecidedDifferently = 0;
  };

  // Every output within tolerance; decisions equal unless the oracle's
  // logits tie within it.
  static Agreement compare(const std::vector<nlohmann::json> &mine, const std::vector<nlohmann::json> &theirs,
                           const std::string &decision, const std::string &logits) {
    Agreement a;
    EXPECT_EQ(mine.size(), theirs.size());
    for (size_t i = 0; i < std::min(mine.size(), theirs.size()); ++i) {
      const nlohmann::json &o = theirs[i]["outputs"];
      int64_t oracleDecision = static_cast<int64_t>(values(o[decision + ":0/int32"])[0]);
      // Every extra output, by the tensor name the writer gives it (<logging name>:0).
      for (const auto &[name, value] : mine[i]["outputs"].items()) {
        if (name == decision)
          continue;
        EXPECT_TRUE(o.contains(name + ":0")) << name;
        if (!o.contains(name + ":0"))
          continue;
        std::vector<double> expected = values(o[name + ":0"]), got = values(value);
        EXPECT_EQ(expected.size(), got.size());
        for (size_t k = 0; k < std::min(expected.size(), got.size()); ++k)
          EXPECT_TRUE(close(got[k], expected[k]))
              << "observation " << i << " " << name << "[" << k << "]: ours " << got[k] << ", TFLite " << expected[k];
      }
      bool tie = !logits.empty() && nearTie(values(o[logits + ":0"]));
      a.Ties += tie;
      a.TiesDecidedDifferently += tie && mine[i]["decision"].get<int64_t>() != oracleDecision;
      if (!tie) {
        EXPECT_EQ(mine[i]["decision"].get<int64_t>(), oracleDecision) << "observation " << i;
      }
      ++a.Compared;
    }
    return a;
  }

  static TempDir *Fixture;
  TempDir Work;
};
TempDir *TFLitePolicy::Fixture = nullptr;

TEST_F(TFLitePolicy, InlinerShapedModelsAgreeWithTFLite) {
  std::string why;
  if (!oracleReady(why))
    GTEST_SKIP() << why;
  size_t ties = 0, compared = 0;
  for (int seed : {1, 2, 3}) {
    std::string m = model("inliner", false, seed);
    Agreement a = compare(ours(m, dir("inliner_obs.jsonl")), oracle(m, dir("inliner_obs.jsonl")), "inlining_decision",
                          "inlining_logits");
    ties += a.Ties;
    compared += a.Compared;
  }
  EXPECT_GT(compared, 600u);
  std::printf("inliner-shaped: %zu evaluations compared with TFLite, %zu near-ties\n", compared, ties);
  RecordProperty("near_ties", static_cast<int>(ties));
  EXPECT_LT(ties, compared / 10);
  // LLVM's trivial model: a constant 1.
  std::string c = model("constant1");
  for (const nlohmann::json &r : ours(c, dir("inliner_obs.jsonl")))
    ASSERT_EQ(r["decision"], 1);
  compare(ours(c, dir("inliner_obs.jsonl")), oracle(c, dir("inliner_obs.jsonl")), "inlining_decision", "");
  // The less common builtins the spec lists as insurance.
  std::string i = model("insurance");
  compare(ours(i, dir("inliner_obs.jsonl")), oracle(i, dir("inliner_obs.jsonl")), "inlining_decision",
          "insurance_selected");
}

TEST_F(TFLitePolicy, EvictionShapedModelsAgreeWithTFLite) {
  std::string why;
  if (!oracleReady(why))
    GTEST_SKIP() << why;
  size_t ties = 0, compared = 0, differently = 0;
  for (int seed : {1, 2}) {
    std::string m = model("evict", true, seed);
    std::string shown = run(tool("mlgo-policy") + " show " + quote(m)).Out;
    for (const char *op : {"GATHER", "TILE", "SELECT_V2", "EQUAL", "BUCKETIZE", "ARG_MAX", "FULLY_CONNECTED(RELU)"})
      EXPECT_NE(shown.find(op), std::string::npos) << op << "\n" << shown;
    Agreement a =
        compare(ours(m, dir("evict_obs.jsonl")), oracle(m, dir("evict_obs.jsonl")), "index_to_evict", "evict_logits");
    ties += a.Ties;
    compared += a.Compared;
    differently += a.TiesDecidedDifferently;
  }
  EXPECT_GT(compared, 200u);
  // Candidates with identical features have identical logits: both take the first.
  std::printf("eviction-shaped: %zu evaluations compared with TFLite, %zu near-ties (%zu decided differently)\n",
              compared, ties, differently);
  RecordProperty("near_ties", static_cast<int>(ties));
  // LLVM's trivial eviction model: the arg-max of the mask.
  std::string m = model("evict_mask_argmax", true);
  auto mine = ours(m, dir("evict_obs.jsonl"));
  compare(mine, oracle(m, dir("evict_obs.jsonl")), "index_to_evict", "");
  auto observations = jsonLines(readFile(dir("evict_obs.jsonl")));
  ASSERT_EQ(mine.size(), observations.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    std::vector<double> mask = values(observations[i]["mask"]);
    EXPECT_EQ(mine[i]["decision"].get<int64_t>(), std::max_element(mask.begin(), mask.end()) - mask.begin());
  }
}

TEST_F(TFLitePolicy, HarvestWithAnInlinerModelLogsTheOraclesDecisions) {
  std::string m = model("inliner", false, 2);
  std::string out = Work / "out";
  CommandResult r = run(harvest(dir("corpus"), out, "--policy=tflite:" + m));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto summary = nlohmann::json::parse(readFile(out + "/summary.json"));
  EXPECT_EQ(summary["modules"]["ok"], 2);
  EXPECT_EQ(summary["policy"], "tflite:" + m);
  size_t decisions = 0;
  std::vector<LoggedObservation> logged =
      writeObservations({out + "/logs/m1.o.log", out + "/logs/m2.o.log"}, Work / "logged.jsonl");
  for (const char *name : {"m1.o", "m2.o"}) {
    // The extra output sits where development mode logs it: before inlining_default.
    auto reader = TrainingLogReader::open(out + "/logs/" + name + ".log");
    ASSERT_TRUE(static_cast<bool>(reader));
    ASSERT_TRUE(static_cast<bool>((*reader)->next()));
    const auto &features = (*reader)->header().Features;
    ASSERT_GE(features.size(), 3u);
    EXPECT_EQ(features[features.size() - 3].Name, "inlining_logits");
    EXPECT_EQ(features[features.size() - 2].Name, "inlining_default");
    EXPECT_EQ(features.back().Name, "inlining_decision");
  }
  decisions = logged.size();
  EXPECT_EQ(summary["decisions"], decisions);
  EXPECT_GT(decisions, 300u);
  // Our evaluator on the logged features reproduces the logged decisions and logits.
  auto mine = ours(m, Work / "logged.jsonl");
  ASSERT_EQ(mine.size(), logged.size());
  size_t inlined = 0;
  for (size_t i = 0; i < logged.size(); ++i) {
    ASSERT_EQ(logged[i]["inlining_decision"], mine[i]["decision"].get<int64_t>()) << i;
    std::vector<double> logits = logged[i].Features.at("inlining_logits"),
                        got = values(mine[i]["outputs"]["inlining_logits"]);
    ASSERT_EQ(logits, got) << i;
    inlined += logged[i]["inlining_decision"] == 1;
  }
  EXPECT_GT(inlined, 0u);
  EXPECT_LT(inlined, logged.size()) << "a random network should not decide one way only";
  // And TFLite itself decides the same on the logged features.
  std::string why;
  if (!oracleReady(why))
    GTEST_SKIP() << why;
  Agreement a = compare(mine, oracle(m, Work / "logged.jsonl"), "inlining_decision", "inlining_logits");
  std::printf("tflite harvest: %zu logged decisions checked against TFLite, %zu near-ties\n", a.Compared, a.Ties);
}

// The evaluator inside the compiler (the plugin's tflite: policy) and in the
// harvester (the interactive host) bind, decide and log alike: the logs are
// the same bytes, extra output included, and auto mode picks the plugin.
TEST_F(TFLitePolicy, PluginAndInteractiveHostLogTheSameBytes) {
  std::string m = model("inliner", false, 3);
  for (const char *mode : {"auto", "interactive"}) {
    CommandResult r = run(harvest(dir("corpus"), Work / mode, "--policy=tflite:" + m + " --mode=" + mode));
    ASSERT_EQ(r.ExitCode, 0) << mode << ": " << r.Err;
  }
  auto summary = nlohmann::json::parse(readFile(Work / "auto/summary.json"));
  EXPECT_EQ(summary["mode"], "plugin") << summary.dump();
  EXPECT_EQ(summary["modules"]["ok"], 2);
  EXPECT_GT(summary["decisions"].get<int64_t>(), 300);
  expectSameLogs(Work / "auto", Work / "interactive");
  // The same decisions, sizes and rewards module by module (streams and mode differ by design).
  auto records = [](const std::string &out) {
    std::map<std::string, nlohmann::json> byModule;
    for (const nlohmann::json &line : jsonLines(readFile(out + "/harvest.jsonl")))
      if (line.contains("module"))
        byModule[line["module"]] = {line["status"], line["decisions"], line["native_size"], line["reward"]};
    return byModule;
  };
  EXPECT_EQ(records(Work / "auto"), records(Work / "interactive"));
  // The same with clang hosting the plugin.
  CommandResult c =
      run(harvest(dir("corpus"), Work / "clang", "--policy=tflite:" + m + " --mode=plugin --compiler=clang"));
  ASSERT_EQ(c.ExitCode, 0) << c.Err;
  EXPECT_GT(readObservations(Work / "clang/logs/m1.o.log").size(), 0u);
}

// A model that binds at load but not to this compiler's features fails each
// module inside the plugin with the evaluator's reason, as on the channel.
TEST_F(TFLitePolicy, PluginReportsAModelThatDoesNotFitTheCompiler) {
  std::string m = model("malformed-shape-mismatch");
  CommandResult h = run(harvest(dir("corpus"), Work / "out", "--mode=plugin --policy=tflite:" + m));
  std::string journal = readFile(Work / "out/harvest.jsonl");
  EXPECT_NE(journal.find("plugin_failed"), std::string::npos) << journal;
  EXPECT_NE(journal.find("model input 'action_callee_users:0' is int64[2] (16 bytes)"), std::string::npos) << journal;
}

TEST_F(TFLitePolicy, TheConstantModelInlinesEveryCallSiteOffered) {
  std::string out = Work / "out";
  CommandResult r = run(harvest(dir("corpus"), out, "--policy=tflite:" + model("constant1")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  size_t total = 0;
  for (const char *name : {"m1.o", "m2.o"})
    for (const LoggedObservation &o : readObservations(out + "/logs/" + name + ".log")) {
      ASSERT_EQ(o["inlining_decision"], 1);
      ++total;
    }
  // Inlining everything offers more call sites than the default inliner does.
  size_t byDefault =
      readObservations(dir("default/logs/m1.o.log")).size() + readObservations(dir("default/logs/m2.o.log")).size();
  EXPECT_GE(total, byDefault);
}

TEST_F(TFLitePolicy, AModelEchoingTheDefaultReproducesTheDefaultHarvest) {
  // The full network, its arg-max forced to inlining_default (the bench's harvest model).
  std::string out = Work / "out";
  CommandResult r = run(harvest(dir("corpus"), out, "--policy=tflite:" + model("inliner_echo")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  for (const char *name : {"m1.o", "m2.o"}) {
    auto echoed = readObservations(out + "/logs/" + name + ".log");
    auto byDefault = readObservations(dir("default/logs/") + name + ".log");
    ASSERT_EQ(echoed.size(), byDefault.size()) << name;
    for (size_t i = 0; i < echoed.size(); ++i) {
      ASSERT_EQ(echoed[i]["inlining_decision"], byDefault[i]["inlining_decision"]) << name << " " << i;
      ASSERT_EQ(echoed[i]["callee_users"], byDefault[i]["callee_users"]) << name << " " << i;
    }
  }
}

TEST_F(TFLitePolicy, HarvestEvictionsWithAnEvictionModel) {
  std::string m = model("evict", true, 1);
  std::string out = Work / "out";
  CommandResult r = run(harvest(dir("rcorpus"), out, "--problem=regalloc-evict --policy=tflite:" + m));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto logged = writeObservations({out + "/logs/r.o.log"}, Work / "logged.jsonl");
  ASSERT_GT(logged.size(), 50u);
  auto mine = ours(m, Work / "logged.jsonl");
  ASSERT_EQ(mine.size(), logged.size());
  for (size_t i = 0; i < logged.size(); ++i) {
    int64_t column = static_cast<int64_t>(logged[i]["index_to_evict"]);
    ASSERT_EQ(column, mine[i]["decision"].get<int64_t>()) << i;
    ASSERT_EQ(logged[i].Features.at("mask").at(static_cast<size_t>(column)), 1) << i;
    ASSERT_EQ(logged[i].Features.at("evict_logits").size(), 33u);
  }
}

// tflite:DIR hosted by the regalloc plugin (--mode=plugin): the model runs
// inside clang-22/llc-22 and decides as harvest-logs' interactive host does
// with the same model: the same observations byte for byte (features, the
// model's evict_logits, index_to_evict), the same objects and sizes (rewards:
// the plugin's RegAllocScore, the host's remarks proxy). A model that cannot
// decide evictions is refused before any compile.
TEST_F(TFLitePolicy, RegallocPluginHostsEvictionModelsAsTheInteractiveHost) {
  std::string m = model("evict", true, 1);
  // llc takes optimized IR; clang's objects embed their command line
  // (.llvmcmd, which names the mode's own flags), compared without it.
  fs::create_directories(Work / "bc");
  mustRun(std::string(MLGO_CLANG) + " -O2 -c -emit-llvm " + quote(dir("src/r.c")) + " -o " + quote(Work / "bc/r.bc"));
  mustRun(tool("make-corpus") + " -q --input_dir=" + quote(Work / "bc") +
          " --output_dir=" + quote(Work / "llc-corpus"));
  auto object = [&](const std::string &path) {
    mustRun("llvm-objcopy-22 --remove-section=.llvmcmd " + quote(path) + " " + quote(path + ".nocmd"));
    return readFile(path + ".nocmd");
  };
  for (const std::string compiler : {"clang", "llc"}) {
    std::string plugin = Work / (compiler + "-plugin"), interactive = Work / (compiler + "-interactive");
    std::string flags = "--problem=regalloc-evict --compiler=" + compiler + " --policy=tflite:" + m;
    std::string in = compiler == "llc" ? Work / "llc-corpus" : dir("rcorpus"), name = compiler == "llc" ? "r" : "r.o";
    CommandResult p = run(harvest(in, plugin, flags + " --mode=plugin --explicit_temps_dir=" + quote(plugin + "-t")));
    ASSERT_EQ(p.ExitCode, 0) << compiler << p.Err;
    EXPECT_EQ(harvestSummary(plugin)["mode"], "plugin");
    CommandResult i =
        run(harvest(in, interactive, flags + " --mode=interactive --explicit_temps_dir=" + quote(interactive + "-t")));
    ASSERT_EQ(i.ExitCode, 0) << compiler << i.Err;
    auto jp = journalByModule(plugin), ji = journalByModule(interactive);
    ASSERT_EQ(jp[name]["status"], "ok") << jp[name].dump();
    ASSERT_EQ(ji[name]["status"], "ok") << ji[name].dump();
    EXPECT_GT(jp[name]["decisions"].get<size_t>(), 50u) << compiler;
    EXPECT_EQ(jp[name]["decisions"], ji[name]["decisions"]) << compiler;
    EXPECT_EQ(jp[name]["native_size"], ji[name]["native_size"]) << compiler;
    EXPECT_TRUE(object(plugin + "-t/" + name + "/native.o") == object(interactive + "-t/" + name + "/native.o"))
        << compiler << ": the objects differ";
    std::string a = logWithoutRewards(plugin + "/logs/" + name + ".log"),
                b = logWithoutRewards(interactive + "/logs/" + name + ".log");
    EXPECT_FALSE(a.empty()) << compiler;
    EXPECT_TRUE(a == b) << compiler << ": the logs differ beyond their rewards";
    auto logged = readObservations(plugin + "/logs/" + name + ".log");
    ASSERT_FALSE(logged.empty());
    EXPECT_EQ(logged[0].Features.at("evict_logits").size(), 33u);
  }
  // The inliner's model cannot decide evictions: refused before any compile,
  // and by the plugin itself, naming its flag.
  CommandResult h = run(harvest(dir("rcorpus"), Work / "out-wrong",
                                "--problem=regalloc-evict --mode=plugin --policy=tflite:" + model("constant1")));
  EXPECT_EQ(h.ExitCode, 1);
  EXPECT_NE(h.Err.find("entry 0 is 'inlining_decision', but regalloc-evict policies decide 'index_to_evict'"),
            std::string::npos)
      << h.Err;
  EXPECT_FALSE(exists(Work / "out-wrong/logs/r.o.log"));
  CommandResult llc = run("llc-22 -O2 -filetype=obj -load " +
                          quote(std::string(MLGO_BIN_DIR) + "/../lib/mlgo-corpus/libMLGORegAllocAdvisor.so") +
                          " -mlgo-regalloc-log=" + quote(Work / "w.log") + " -mlgo-regalloc-policy=tflite:" +
                          quote(model("constant1")) + " " + quote(Work / "bc/r.bc") + " -o " + quote(Work / "w.o"));
  EXPECT_NE(llc.ExitCode, 0);
  EXPECT_NE(
      llc.Err.find("mlgo-regalloc: -mlgo-regalloc-policy=tflite:" + model("constant1") + " (for -mlgo-regalloc-log): "),
      std::string::npos)
      << llc.Err;
  EXPECT_NE(llc.Err.find("but regalloc-evict policies decide 'index_to_evict'"), std::string::npos) << llc.Err;
}

TEST_F(TFLitePolicy, MalformedModelsAreClearErrors) {
  struct Case {
    std::string Kind, Expect;
  };
  for (const Case &c : std::vector<Case>{
           {"malformed-unknown-operator", "builtin operator 25 is not implemented"},
           {"malformed-custom-operator", "custom operator 'MlgoSecretSauce'"},
           {"malformed-quantized", "is quantized"},
           {"malformed-bad-output-spec", "names output 'no_such_output:0'"},
           {"malformed-huge-tensors", "need more than 64 MiB together"},
           // 256 operators writing one [4096,4096] tensor from [4096,1] x [1,4096]: once > 4 GB of index maps.
           {"malformed-shared-output", "operator 3 (ADD) writes tensor 'grid', which operator 2 (ADD) writes too"},
           {"malformed-two-writers",
            "operator 2 (MUL) writes tensor 'inlining_decision:0', which operator 1 (ADD) writes too"},
           // One operator listing its output twice: the message once read the
           // operator it was still building (a null operator name).
           {"malformed-output-twice", "operator 1 (ADD) writes tensor 'inlining_decision:0' twice"},
           // 1024 tensors naming one 1 MiB string: a 1 MB file, 1 GiB of names once copied.
           {"malformed-shared-names", "need more than 64 MiB together"},
           {"malformed-tile-overflow", "dimension 0 (2) times the multiple 4611686018427387904 overflows"},
       }) {
    std::string m = model(c.Kind);
    CommandResult r = run(boundedMemory(tool("mlgo-policy") + " show " + quote(m)));
    EXPECT_EQ(r.ExitCode, 1) << c.Kind << ": " << r.Err;
    EXPECT_NE(r.Err.find(c.Expect), std::string::npos) << c.Kind << ": " << r.Err;
    EXPECT_NE(r.Err.find(m), std::string::npos) << "the error names the file: " << r.Err;
    // harvest-logs refuses it before compiling anything.
    CommandResult h =
        run(boundedMemory(harvest(dir("corpus"), Work / ("out-" + c.Kind), "--policy=tflite:" + m), 1024));
    EXPECT_EQ(h.ExitCode, 1) << c.Kind;
    EXPECT_NE(h.Err.find(c.Expect), std::string::npos) << c.Kind << ": " << h.Err;
  }
  // A model input whose size differs from the compiler's feature.
  std::string m = model("malformed-shape-mismatch");
  CommandResult h = run(harvest(dir("corpus"), Work / "out-shape", "--policy=tflite:" + m));
  EXPECT_NE(h.Err.find("model input 'action_callee_users:0' is int64[2] (16 bytes), but the compiler's feature "
                       "'callee_users' is int64_t[1] (8 bytes)"),
            std::string::npos)
      << h.Err;
  auto journal = readFile(Work / "out-shape/harvest.jsonl");
  EXPECT_NE(journal.find("policy_error"), std::string::npos) << journal;
  // The inliner's model cannot decide evictions.
  h = run(
      harvest(dir("rcorpus"), Work / "out-wrong", "--problem=regalloc-evict --policy=tflite:" + model("constant1")));
  EXPECT_EQ(h.ExitCode, 1);
  EXPECT_NE(h.Err.find("entry 0 is 'inlining_decision', but regalloc-evict policies decide 'index_to_evict'"),
            std::string::npos)
      << h.Err;

  // Truncated and corrupted files: clear errors, never a crash.
  std::string good = readFile(model("inliner") + "/model.tflite");
  auto parse = [](const std::string &bytes) { return model::TFLiteModel::parse(bytes, "policy/model.tflite"); };
  ASSERT_TRUE(static_cast<bool>(parse(good)));
  for (size_t cut : {size_t(0), size_t(7), size_t(100), good.size() / 2, good.size() - 1}) {
    auto r = parse(good.substr(0, cut));
    ASSERT_FALSE(static_cast<bool>(r)) << cut;
    std::string message = llvm::toString(r.takeError());
    EXPECT_NE(message.find("policy/model.tflite: cannot use this TFLite model"), std::string::npos) << message;
  }
  std::string badRoot = good;
  badRoot[0] = '\xff', badRoot[1] = '\xff', badRoot[2] = '\xff', badRoot[3] = '\x7f';
  auto r = parse(badRoot);
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("lies outside the file"), std::string::npos);
  std::string badId = good;
  badId[4] = 'X';
  r = parse(badId);
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("no TFL3 file identifier"), std::string::npos);
  // Every 4-byte word overwritten with a large offset: loads or fails, never reads outside.
  size_t loaded = 0, refused = 0;
  for (size_t at = 8; at + 4 <= good.size() && at < 4096; at += 4) {
    std::string bad = good;
    bad[at] = '\x00', bad[at + 1] = '\xf0', bad[at + 2] = '\xff', bad[at + 3] = '\x7f';
    auto m2 = parse(bad);
    if (m2) {
      ++loaded;
      llvm::consumeError((*m2)->invoke()); // may fail on a corrupted value, must not crash
    } else {
      ++refused;
      llvm::consumeError(m2.takeError());
    }
  }
  EXPECT_GT(refused, 0u);
}

// Broadcasting costs no memory beyond the tensors: three EQUALs of [4096,1]
// against [1,4096] make 48 MiB of results, which load and run within the
// address-space cap (index maps per operand once took 384 MiB more), and
// every element is right, in both operand orders.
TEST_F(TFLitePolicy, BroadcastingNeedsNoMemoryBeyondItsTensors) {
  std::string m = model("wide_broadcasts");
  writeFile(Work / "obs.json", R"({"callee_users": 3})");
  CommandResult r = run(
      boundedMemory(tool("mlgo-policy") + " eval " + quote(m) + " --observations " + quote(Work / "obs.json"), 400));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(nlohmann::json::parse(r.Out)["decision"], 1) << r.Out;

  auto loaded = model::TFLiteModel::load(m + "/model.tflite");
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  model::TFLiteModel &tfl = **loaded;
  std::map<std::string, size_t> byName;
  for (const model::GraphPort &p : tfl.inputs())
    byName[tfl.tensors()[p.Tensor].Name] = p.Tensor;
  for (const model::GraphPort &p : tfl.outputs())
    byName[tfl.tensors()[p.Tensor].Name] = p.Tensor;
  // rows[i] = i % 97, cols[j] = j % 89: equal where both residues agree.
  auto fill = [&](const std::string &name, int modulus) {
    llvm::MutableArrayRef<char> bytes = tfl.data(byName.at(name));
    for (size_t i = 0; i < bytes.size() / 4; ++i) {
      int32_t v = static_cast<int32_t>(i % modulus);
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
  };
  fill("rows", 97);
  fill("cols", 89);
  ASSERT_FALSE(static_cast<bool>(tfl.invoke()));
  for (const char *name : {"equal0", "equal1", "equal2"}) {
    llvm::ArrayRef<char> eq = tfl.data(byName.at(name));
    ASSERT_EQ(eq.size(), size_t(4096) * 4096);
    size_t wrong = 0, trues = 0;
    for (size_t i = 0; i < 4096; ++i)
      for (size_t j = 0; j < 4096; ++j) {
        char expected = (i % 97) == (j % 89);
        wrong += eq[i * 4096 + j] != expected;
        trues += expected;
      }
    EXPECT_EQ(wrong, 0u) << name;
    EXPECT_GT(trues, 0u);
  }
}

// A bool tensor holds one byte per element; any non-zero byte is true, in a
// constant and in an input alike (reading such a byte as a C++ bool was
// undefined behaviour: EQUAL with true said false, CAST made 2.0 or 255).
TEST_F(TFLitePolicy, BoolTensorsHoldingOtherBytesAreTrue) {
  auto loaded = model::TFLiteModel::load(model("bool_bytes") + "/model.tflite");
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  model::TFLiteModel &tfl = **loaded;
  std::map<std::string, size_t> byName;
  for (const model::GraphPort &p : tfl.inputs())
    byName[tfl.tensors()[p.Tensor].Name] = p.Tensor;
  for (const model::GraphPort &p : tfl.outputs())
    byName[tfl.tensors()[p.Tensor].Name] = p.Tensor;
  llvm::MutableArrayRef<char> flags = tfl.data(byName.at("flags"));
  ASSERT_EQ(flags.size(), 4u);
  const unsigned char fed[4] = {0, 1, 2, 255};
  std::memcpy(flags.data(), fed, 4);
  ASSERT_FALSE(static_cast<bool>(tfl.invoke()));
  for (const char *source : {"input", "const"}) {
    std::string s = source;
    llvm::ArrayRef<char> eq = tfl.data(byName.at("equal_" + s));
    float f[4];
    int32_t i[4];
    float sel[4];
    std::memcpy(f, tfl.data(byName.at("float_" + s)).data(), sizeof(f));
    std::memcpy(i, tfl.data(byName.at("int_" + s)).data(), sizeof(i));
    std::memcpy(sel, tfl.data(byName.at("select_" + s)).data(), sizeof(sel));
    for (size_t k = 0; k < 4; ++k) {
      int truth = k != 0;
      EXPECT_EQ(static_cast<int>(eq[k]), truth) << s << " EQUAL " << k; // a bool result is 0 or 1
      EXPECT_EQ(f[k], static_cast<float>(truth)) << s << " CAST to float32 " << k;
      EXPECT_EQ(i[k], truth) << s << " CAST to int32 " << k;
      EXPECT_EQ(sel[k], static_cast<float>(truth)) << s << " SELECT_V2 " << k;
    }
  }
}

// mlgo-policy eval refuses a number its input's type cannot hold (casting
// 1e300 to int64 was undefined behaviour); values in range are truncated
// toward zero.
TEST_F(TFLitePolicy, EvalRefusesValuesBeyondTheInputsType) {
  std::string m = model("constant1"); // inputs: callee_users int64, discount and reward float32, step_type int32
  struct Case {
    std::string Observation, Expect;
  };
  for (const Case &c : std::vector<Case>{
           {R"({"callee_users": 1e300})", "'callee_users' is 1e+300, out of range for int64"},
           {R"({"callee_users": -1e300})", "'callee_users' is -1e+300, out of range for int64"},
           {R"({"callee_users": 9.3e18})", "'callee_users' is 9.3e+18, out of range for int64"},
           {R"({"callee_users": 18446744073709551615})",
            "'callee_users' is 18446744073709551615, out of range for int64"},
           {R"({"step_type": 2147483648})", "'step_type' is 2147483648, out of range for int32"},
           {R"({"step_type": -3e9})", "'step_type' is -3e+09, out of range for int32"},
           {R"({"discount": 1e300})", "'discount' is 1e+300, out of range for float32"},
       }) {
    writeFile(Work / "obs.json", c.Observation);
    CommandResult r =
        run(bounded(tool("mlgo-policy") + " eval " + quote(m) + " --observations " + quote(Work / "obs.json")));
    EXPECT_EQ(r.ExitCode, 1) << c.Observation << ": " << r.Out << r.Err;
    EXPECT_NE(r.Err.find(c.Expect), std::string::npos) << c.Observation << ": " << r.Err;
    EXPECT_NE(r.Err.find(Work / "obs.json"), std::string::npos) << "the error names the file: " << r.Err;
  }
  writeFile(Work / "obs.json", R"({"callee_users": 9.2e18, "step_type": -2147483648.9, "discount": 3.4e38})");
  CommandResult r =
      run(bounded(tool("mlgo-policy") + " eval " + quote(m) + " --observations " + quote(Work / "obs.json")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(nlohmann::json::parse(r.Out)["decision"], 1);
}

// The output spec's entry 0 is checked in one place for both hosts: inside
// the compiler (plugin mode) every module fails with the interactive host's
// message. That the plugin-mode harvest gets as far as compiling also shows
// that the harvester did not load the model itself.
TEST_F(TFLitePolicy, PluginChecksTheDecisionOutputAsTheInteractiveHostDoes) {
  struct Case {
    std::string Kind, Expect;
  };
  for (const Case &c : std::vector<Case>{
           {"malformed-wrong-decision-name", "entry 0 is 'index_to_evict', but inliner policies decide "
                                             "'inlining_decision'"},
           {"malformed-wide-decision", "the decision 'inlining_decision' must have one element"},
       }) {
    std::string m = model(c.Kind);
    std::string expect = m + "/output_spec.json: " + c.Expect;
    CommandResult i = run(
        bounded(harvest(dir("corpus"), Work / (c.Kind + "-interactive"), "--mode=interactive --policy=tflite:" + m)));
    EXPECT_EQ(i.ExitCode, 1) << i.Err;
    EXPECT_NE(i.Err.find(expect), std::string::npos) << i.Err;

    std::string out = Work / (c.Kind + "-plugin");
    CommandResult p = run(bounded(harvest(dir("corpus"), out, "--mode=plugin --policy=tflite:" + m)));
    EXPECT_EQ(p.ExitCode, 0) << p.Err;
    auto journal = journalByModule(out);
    ASSERT_EQ(journal.size(), 2u) << c.Kind << ": " << p.Err;
    for (const auto &[module, line] : journal) {
      EXPECT_EQ(line["status"], "failed") << line.dump();
      EXPECT_EQ(line["reason"], "plugin_failed") << line.dump();
      EXPECT_NE(line["detail"].get<std::string>().find(expect), std::string::npos) << line.dump();
    }
  }
}

// In plugin mode the compiler loads the model; the harvester does not (it
// once loaded one unused copy per worker, and one more). Exec'd, every open
// of model.tflite comes from a process that has become opt; with the compile
// server, from the server itself before it forks (once per server, whatever
// the number of modules), never from its per-module children.
TEST_F(TFLitePolicy, InPluginModeOnlyTheCompilerLoadsTheModel) {
  if (run("strace -f -qq -e trace=execve -o /dev/null true").ExitCode != 0)
    GTEST_SKIP() << "strace cannot trace here";
  std::string m = model("constant1");
  for (const std::string server : {"off", "on"}) {
    std::string trace = Work / ("trace-" + server);
    CommandResult r =
        run(NoLeakCheckUnderPtrace +
            bounded("strace -f -qq -e trace=execve,openat,clone,clone3,fork,vfork -o " + quote(trace) + " " +
                    harvest(dir("corpus"), Work / ("out-" + server),
                            "--mode=plugin --compile_server=" + server + " --policy=tflite:" + m)));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    // strace -f orders each process's own lines, not a clone's result
    // against the new process's first lines (which may come before it), and
    // pads a result with spaces. So the clones are read first, whatever
    // their place: which process made which, and which was a thread (its
    // CLONE_THREAD is on the call's first line); then, in order, each
    // process's own execs. A thread runs what its process runs; a forked
    // process without an exec of its own must not open the model.
    std::vector<std::string> all;
    std::istringstream lines(readFile(trace));
    for (std::string line; std::getline(lines, line);)
      all.push_back(line);
    std::map<std::string, std::string> creator; // a thread -> the process that made it
    std::map<std::string, bool> makingThread;   // pid -> its pending clone makes a thread
    const std::regex result(R"(\)\s+= ([0-9]+)$)");
    for (const std::string &line : all) {
      std::string pid = line.substr(0, line.find(' '));
      if (line.find("clone") == std::string::npos && line.find("fork") == std::string::npos)
        continue;
      if (line.find("resumed>") == std::string::npos)
        makingThread[pid] = line.find("CLONE_THREAD") != std::string::npos;
      std::smatch made;
      if (std::regex_search(line, made, result) && makingThread[pid])
        creator[made[1]] = pid;
    }
    std::map<std::string, std::string> program; // pid -> what it last exec'd itself
    size_t opens = 0;
    for (const std::string &line : all) {
      std::string pid = line.substr(0, line.find(' '));
      if (size_t at = line.find("execve(\""); at != std::string::npos) {
        size_t begin = at + 8;
        program[pid] = line.substr(begin, line.find('"', begin) - begin);
      } else if (line.find("/model.tflite\"") != std::string::npos) {
        std::string process = pid;
        while (!program.count(process) && creator.count(process))
          process = creator[process];
        std::string exe = program.count(process) ? program[process] : "";
        bool expected = exe.find(server == "off" ? "opt" : "mlgo-compile-server") != std::string::npos;
        EXPECT_TRUE(expected) << server << ": process " << pid << " ("
                              << (exe.empty() ? "forked, no exec of its own" : exe) << ") opened the model: " << line;
        opens += expected;
      }
    }
    EXPECT_GE(opens, server == "off" ? 2u : 1u) << server << ": the compiles load the model";
    if (server == "on")
      EXPECT_LE(opens, harvestSummary(Work / "out-on")["compile_server"]["starts"].get<size_t>())
          << "the model is loaded once per server";
  }
}

} // namespace
