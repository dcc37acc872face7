// The Python package (python/, docs/python.md) against the tools, on real
// harvests: mlgo_corpus.read_log equals `training-log dump` observation by
// observation, Harvest equals the journal, read_tfrecord equals a decoder
// built on the real protobuf library; hostile inputs raise, never crash.
// The checks themselves are Python scripts in tests/python/.
#include "support/PythonPackage.h"
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

using namespace mlgo;
using namespace mlgo::test;

namespace {

constexpr bool HavePackage = HavePythonPackage;
const std::string &PackageDir = PythonPackageDir, &Python3 = PackagePython3;
// The package's python3, with the package on its path.
const std::string Python = "env PYTHONPATH=" + quote(PackageDir) + " " + quote(Python3) + " ";

std::string script(const std::string &name) { return quote(std::string(MLGO_SOURCE_DIR) + "/tests/python/" + name); }

// check_harvest.py's summary of what it compared.
nlohmann::json checkHarvest(const std::string &out, const std::string &tfrecord) {
  CommandResult r =
      run(Python + script("check_harvest.py") + " " + quote(out) + " " + quote(tool("training-log")) + " " +
          quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/decode_sequence_examples.py") + " " + quote(tfrecord));
  EXPECT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  if (r.ExitCode != 0)
    return nullptr;
  return nlohmann::json::parse(r.Out);
}

class PythonPackage : public InlinerCorpusSuite {
protected:
  void SetUp() override {
    if (!HavePackage)
      GTEST_SKIP() << "the Python package is not built here (needs python3-dev and pybind11-dev; not in the "
                      "sanitizer build)";
  }
  TempDir Work;
};

} // namespace

TEST_F(PythonPackage, InlinerLogsHarvestAndDatasetEqualWhatTheToolsRead) {
  std::string out = Work / "out";
  mustRun(harvestCommand(corpus(), out, "--tfrecord=" + quote(out + "/trace.tfrecord")));
  nlohmann::json checked = checkHarvest(out, out + "/trace.tfrecord");
  ASSERT_FALSE(checked.is_null());
  EXPECT_EQ(checked["modules"], 4);
  EXPECT_EQ(checked["logs"], 4);
  EXPECT_GT(checked["observations"].get<int>(), 100);
  EXPECT_EQ(checked["tfrecord_records"], 4);
}

// The torch.utils.data adapters over a real harvest (where torch is installed).
TEST_F(PythonPackage, TorchAdaptersHoldEveryObservationOnce) {
  if (run(Python + "-c 'import torch'").ExitCode != 0)
    GTEST_SKIP() << "needs python3-torch (scripts/test.sh installs it)";
  std::string out = Work / "out";
  mustRun(harvestCommand(corpus(), out, ""));
  mustRun(quote(tool("training-log")) + " vocab --output_dir=" + quote(Work / "vocab") + " " + quote(out + "/logs"));
  CommandResult r = run(Python + script("check_torch_data.py") + " " + quote(out) + " " + quote(Work / "vocab"));
  ASSERT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  EXPECT_GT(nlohmann::json::parse(r.Out)["observations"].get<int>(), 100);
}

TEST_F(PythonPackage, RegallocLogsWithRewardsEqualWhatTheToolsRead) {
  std::vector<std::pair<std::string, std::string>> sources;
  for (int m = 0; m < 2; ++m)
    sources.push_back({"r" + std::to_string(m), "extern int ext(int);\n" + pressureFunction("f", 24 + 8 * m) +
                                                    pressureFunction("g", 28 + 8 * m)});
  std::string corpus = makeEmbeddedBitcodeCorpus(Work.path(), sources, "-O2", ObjectListing::Directory);
  std::string out = Work / "out";
  mustRun(harvestCommand(corpus, out,
                         "--problem=regalloc-evict --policy=random:0.5:1 --tfrecord=" + quote(out + "/ra.tfrecord")));
  nlohmann::json checked = checkHarvest(out, out + "/ra.tfrecord");
  ASSERT_FALSE(checked.is_null());
  EXPECT_EQ(checked["logs"], 2);
  EXPECT_GT(checked["observations"].get<int>(), 10);
  // Outcomes (the eviction problem's rewards) were compared with the dump's.
  EXPECT_GT(checked["rewarded"].get<int>(), 0);
}

TEST_F(PythonPackage, HostileInputsRaiseWithTheReasonAndNeverCrash) {
  CommandResult r = run(Python + script("check_hostile.py") + " " + quote(Work.path()));
  EXPECT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  EXPECT_NE(r.Out.find(", 0 failed"), std::string::npos) << r.Out;
}

// mlgo_corpus.policy.serve as harvest-logs' exec: policy: echoing
// inlining_default gives the default policy's logs byte for byte; a
// constant answer is what the log records; an answer of the wrong size fails
// that module with policy_error and the policy's stderr says why.
TEST_F(PythonPackage, ServedPoliciesAnswerTheCompilerAsExecPolicies) {
  std::string served = Python + script("serve_policy.py") + " ";
  mustRun(harvestCommand(corpus(), Work / "default", "--num_workers=2"));
  CommandResult r =
      run(harvestCommand(corpus(), Work / "echo", "--num_workers=2 --policy=exec:" + quote(served + "default")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  for (int i = 1; i <= 4; ++i) {
    std::string log = "/logs/m" + std::to_string(i) + ".o.log";
    EXPECT_EQ(readFile(Work / ("echo" + log)), readFile(Work / ("default" + log))) << log;
  }
  r = run(harvestCommand(corpus(), Work / "never", "--modules_filter=m[12] --policy=exec:" + quote(served + "never")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  for (const std::string &m : {"m1.o", "m2.o"}) {
    auto observations = readObservations(Work / ("never/logs/" + m + ".log"));
    ASSERT_FALSE(observations.empty()) << m;
    size_t inlinedByDefault = 0;
    for (const LoggedObservation &o : observations) {
      EXPECT_EQ(o["inlining_decision"], 0) << m;
      inlinedByDefault += o["inlining_default"] != 0;
    }
    EXPECT_GT(inlinedByDefault, 0u) << m << ": the test needs call sites the default inlines";
  }
  r = run(harvestCommand(corpus(), Work / "wrong",
                         "--modules_filter=m1 --compilation_timeout=20 --policy=exec:" + quote(served + "wrong-size")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto j = journalByModule(Work / "wrong")["m1.o"];
  EXPECT_EQ(j["status"], "failed") << j.dump();
  EXPECT_EQ(j["reason"], "policy_error") << j.dump();
  std::string stderrText;
  for (const std::string &f : listTree(Work / "wrong"))
    if (f.find("policy.") != std::string::npos && f.find(".stderr") != std::string::npos)
      stderrText += readFile(Work / ("wrong/" + f));
  EXPECT_NE(stderrText.find("decide() returned 2 values"), std::string::npos) << stderrText;
}

// A served policy that returns (decision, certainty) explores as the
// standalone example policy with the same certainty does, byte for byte.
TEST_F(PythonPackage, AServedPolicyGivesItsCertaintyToTheExploration) {
  std::string served = "exec:" + Python + script("serve_policy.py") + " certain";
  std::string example = "exec:/usr/bin/python3 " + std::string(MLGO_SOURCE_DIR) + "/scripts/echo_default_policy.py";
  for (const auto &[name, policy] : {std::pair{"served", served}, std::pair{"example", example}}) {
    CommandResult r =
        run(harvestCommand(corpus(), Work / name, "--num_workers=2 --explore=2 --policy=" + quote(policy)));
    ASSERT_EQ(r.ExitCode, 0) << name << ": " << r.Err;
  }
  std::string table = readFile(Work / "served/explore.jsonl");
  EXPECT_NE(table.find("\"flipped_step\":"), std::string::npos);
  // The tables name their own base policy; the rest is the same.
  auto withoutPolicy = [](std::string text, const std::string &policy) {
    for (size_t at; (at = text.find(policy)) != std::string::npos;)
      text.erase(at, policy.size());
    return text;
  };
  EXPECT_EQ(withoutPolicy(table, served), withoutPolicy(readFile(Work / "example/explore.jsonl"), example));
}

// export_policy: a torch network trained on a harvest's logs, exported, makes
// the torch model's decisions on every logged observation under our
// evaluator, under TFLite itself (npm; when installed) and inside the
// compiler (a tflite: harvest's every decision).
TEST_F(PythonPackage, ExportedPoliciesDecideAsTheTorchModel) {
  if (run(Python + "-c 'import torch, flatbuffers'").ExitCode != 0)
    GTEST_SKIP() << "needs python3-torch and python3-flatbuffers (scripts/test.sh installs them)";
  std::string out = Work / "default";
  mustRun(harvestCommand(corpus(), out, ""));
  mustRun(quote(tool("training-log")) + " vocab --output_dir=" + quote(Work / "vocab") + " " + quote(out + "/logs"));
  std::string wasm = std::string(MLGO_TFLITE_ORACLE_DIR) + "/node_modules/@tensorflow/tfjs-tflite/wasm";
  std::string oracle;
  if (exists(wasm + "/tflite_web_api_cc.wasm") && run("command -v node").ExitCode == 0)
    oracle = " node " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/tflite_oracle.js") + " " + quote(wasm);
  CommandResult r = run(Python + script("check_export.py") + " " + quote(out) + " " + quote(Work / "vocab") + " " +
                        quote(Work.path()) + " " + quote(tool("mlgo-policy")) + " " + quote(tool("harvest-logs")) +
                        " " + quote(corpus()) + oracle);
  ASSERT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  nlohmann::json checked = nlohmann::json::parse(r.Out);
  EXPECT_GT(checked["observations"].get<int>(), 100);
  EXPECT_GT(checked["decisions_in_compiler"].get<int>(), 100);
  if (!oracle.empty())
    EXPECT_EQ(checked["tflite_checked"], checked["observations"]);
  else
    std::cerr << "note: TFLite from npm is not installed; the oracle part was left out\n";
}

// examples/train_inliner: the whole loop (harvest, behavioural cloning in
// PyTorch, export, a tflite: harvest) on a generated corpus whose default
// inliner takes both decisions; the clone must reproduce at least 95% of the
// default decisions it was trained on.
TEST_F(PythonPackage, TheTrainInlinerExampleClosesTheLoop) {
  if (run(Python + "-c 'import torch, flatbuffers'").ExitCode != 0)
    GTEST_SKIP() << "needs python3-torch and python3-flatbuffers (scripts/test.sh installs them)";
  std::string corpus = makeEmbeddedBitcodeCorpus(Work.path(), mixedDecisionSources(8), "-Oz", ObjectListing::Directory);
  CommandResult r = run(Python + quote(std::string(MLGO_SOURCE_DIR) + "/examples/train_inliner/train_inliner.py") +
                        " --corpus=" + quote(corpus) + " --work=" + quote(Work / "loop") +
                        " --tools_dir=" + quote(std::string(MLGO_BIN_DIR)));
  ASSERT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  nlohmann::json report = nlohmann::json::parse(r.Out);
  EXPECT_EQ(report["modules"], 8);
  EXPECT_GT(report["training_decisions"].get<int>(), 200);
  EXPECT_GT(report["default_inlined"].get<double>(), 0.05) << "the corpus must make the default decide both ways";
  EXPECT_LT(report["default_inlined"].get<double>(), 0.95) << "the corpus must make the default decide both ways";
  EXPECT_GE(report["agreement_with_default"].get<double>(), 0.95) << r.Out;
  EXPECT_TRUE(report["policy_failed_modules"].empty()) << r.Out;
  EXPECT_GT(report["policy_native_size"].get<int>(), 0);
  std::cerr << "train_inliner: " << r.Out;
}

// examples/train_inliner/bc_max.py: iterative BC-Max, two rounds on a
// generated corpus, each round's policy exported, checked against torch and
// evaluated per object and linked on a held-out program; round 2 trains on
// the default's and round 1's policy's explorations; a rerun resumes.
TEST_F(PythonPackage, TheBCMaxLoopRunsTwoRoundsAndEvaluatesLinked) {
  if (run(Python + "-c 'import torch'").ExitCode != 0)
    GTEST_SKIP() << "needs python3-torch (scripts/test.sh installs it)";
  std::string train = makeEmbeddedBitcodeCorpus(Work.path(), mixedDecisionSources(6), "-Oz", ObjectListing::Directory);
  std::string heldout =
      makeEmbeddedBitcodeCorpus(Work.path(), linkedProgramSources(), "-Oz", ObjectListing::Directory, "prog-");
  std::string loop = Work / "loop";
  std::string command = Python + quote(std::string(MLGO_SOURCE_DIR) + "/examples/train_inliner/bc_max.py") +
                        " --train_corpus=" + quote(train) + " --heldout=prog=" + quote(heldout) +
                        " --link=" + quote("prog=" + std::string(MLGO_CLANG) + " -fuse-ld=lld {objects} -o {output}") +
                        " --work=" + quote(loop) +
                        " --rounds=2 --explore=1 --epochs=2 --tools_dir=" + quote(std::string(MLGO_BIN_DIR));
  CommandResult r = run(command);
  ASSERT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  nlohmann::json report = nlohmann::json::parse(readFile(loop + "/report.json"));
  ASSERT_EQ(report["rounds"].size(), 2u);
  for (const nlohmann::json &round : report["rounds"]) {
    EXPECT_EQ(round["training"]["export_check"]["ok"], true) << round["training"].dump();
    ASSERT_EQ(round["heldout"].size(), 1u);
    const nlohmann::json &row = round["heldout"][0];
    EXPECT_EQ(row["failed_cells"], 0) << row.dump();
    EXPECT_GT(row["default_size"].get<int>(), 0);
    EXPECT_GT(row["policy_size"].get<int>(), 0);
    EXPECT_GT(row["linked_policy_text"].get<int>(), 0) << row.dump();
    EXPECT_TRUE(exists(round["policy"].get<std::string>() + "/model.tflite"));
  }
  EXPECT_EQ(report["rounds"][0]["training"]["chosen_from"].size(), 1u);
  EXPECT_EQ(report["rounds"][1]["training"]["chosen_from"].size(), 2u) << "round 1's policy joins the baselines";
  EXPECT_TRUE(report["rounds"][0]["train_corpus_policy"].is_number()) << "round 1's policy explored";
  int best = report["best_round"];
  EXPECT_TRUE(exists(loop + "/best/policy/model.tflite"));
  EXPECT_TRUE(exists(loop + "/best/prog.html"));
  EXPECT_NE(r.Out.find("best round: " + std::to_string(best)), std::string::npos) << r.Out;
  // A rerun redoes nothing: every step's output is complete.
  CommandResult again = run(command);
  ASSERT_EQ(again.ExitCode, 0) << again.Err;
  EXPECT_NE(again.Err.find("explore default: done before"), std::string::npos) << again.Err;
  EXPECT_NE(again.Err.find("train " + loop + "/round-2/policy: done before"), std::string::npos) << again.Err;
  EXPECT_EQ(again.Out, r.Out.substr(0, r.Out.rfind("best round:")) + again.Out.substr(again.Out.rfind("best round:")));
}

// mlgo_corpus.InlinerEnv: a seeded random agent's episodes over the corpus
// equal, observation by observation, harvest-logs replaying its actions; the
// final native size, default size and reward equal the journal's; close(), a
// new reset() and a SIGKILLed host leave no opt process, close() no FIFO; a
// corrupt module, a hanging compiler and bad actions are clear errors
// (tests/python/check_env.py).
TEST_F(PythonPackage, TheInlinerEnvironmentSeesWhatAHarvestLogsAndCleansUp) {
  CommandResult r = run(Python + script("check_env.py") + " " + quote(corpus()) + " " + quote(tool("harvest-logs")) +
                        " " + quote(Work.path()));
  ASSERT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  nlohmann::json checked = nlohmann::json::parse(r.Out);
  EXPECT_EQ(checked["modules"], 4);
  EXPECT_GT(checked["observations_compared"].get<int>(), 1000);
}

// mlgo_corpus.train's parts against values computed by hand in the check:
// the bucket weights (exponentiated gradient over two profile pairs), size
// labels at the thresholds (a loss equal to one goes up), the network's
// shape and initialisation, the weighted loss, the two-logit export form,
// profile files, one seed's weights reproduced and a loss that decreases
// (tests/python/check_train.py).
TEST_F(PythonPackage, BCMaxTrainerPartsComputeWhatTheSpecSays) {
  if (run(Python + "-c 'import torch'").ExitCode != 0)
    GTEST_SKIP() << "needs python3-torch (scripts/test.sh installs it)";
  CommandResult r = run(Python + script("check_train.py") + " " + quote(Work.path()));
  ASSERT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  EXPECT_EQ(nlohmann::json::parse(r.Out)["checked"].size(), 11u) << r.Out;
}

// python3 -m mlgo_corpus.train on two --explore=2 harvests (a random base
// policy, then the default): each module trains on the smallest kept
// trajectory, the profiles are what the harvests measured (and valid
// against imitation_profile.schema.json), the command line and the API export the
// same bytes for a seed, the exported policy decides as the torch network on
// every logged observation and inside the compiler (a tflite: harvest), and
// a missing log, explore.jsonl or quantile file is an error naming it
// (tests/python/check_train_e2e.py).
TEST_F(PythonPackage, BCMaxTrainsOnExploredHarvestsAndExportsAPolicyThatDecidesAsTorch) {
  if (run(Python + "-c 'import torch, flatbuffers'").ExitCode != 0)
    GTEST_SKIP() << "needs python3-torch and python3-flatbuffers (scripts/test.sh installs them)";
  // And a module without a call: no decisions, so no trajectory to train on (it once stopped the trainer).
  auto sources = mixedDecisionSources(4);
  sources.push_back({"flat", "int flat(int x) { return x * 3 + 1; }\n"});
  std::string corpus = makeEmbeddedBitcodeCorpus(Work.path(), sources, "-Oz", ObjectListing::Directory);
  std::string random = Work / "random", base = Work / "default";
  mustRun(harvestCommand(corpus, random,
                         "--mode=plugin --num_workers=2 --explore=2 --explore_order=random:1 --policy=random:0.5:1"));
  mustRun(harvestCommand(corpus, base, "--mode=plugin --num_workers=2 --explore=2"));
  mustRun(quote(tool("training-log")) + " vocab --output_dir=" + quote(Work / "vocab") + " " + quote(random + "/logs") +
          " " + quote(base + "/logs"));
  std::string work = Work / "train";
  mustRun("mkdir -p " + quote(work));
  CommandResult r = run(Python + script("check_train_e2e.py") + " " + quote(random) + " " + quote(base) + " " +
                        quote(Work / "vocab") + " " + quote(work) + " " + quote(tool("mlgo-policy")) + " " +
                        quote(tool("harvest-logs")) + " " + quote(corpus));
  ASSERT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  nlohmann::json checked = nlohmann::json::parse(r.Out);
  EXPECT_EQ(checked["modules"], 4);
  EXPECT_EQ(checked["observations_compared"], checked["samples"]);
  EXPECT_GT(checked["samples"].get<int>(), 100);
  EXPECT_GT(checked["inlined_in_compiler"].get<int>(), 0);
  EXPECT_LT(checked["inlined_in_compiler"].get<int>(), checked["decisions_in_compiler"].get<int>());
  for (const std::string &profile : {"_max", "_pol0", "_pol1"})
    mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " " +
            quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/imitation_profile.schema.json") + " " +
            quote(work + "/profile" + profile + ".json"));
}
