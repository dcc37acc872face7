// A policy that deviates from -Oz only where its classifier expects a flip
// to pay (python -m mlgo_corpus.deviate, docs/python.md), trained on a real
// rollouts harvest: the trainer is reproducible, refuses tables and sites
// that do not match their logs, and exports a policy that decides as torch
// inside the compiler, fed the default's decision and cost margin by the
// plugin; one that never deviates is -Oz, object for object, in clang-22.
// The checks on the Python side are tests/python/check_deviate_e2e.py.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/PythonPackage.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Python = "env PYTHONPATH=" + quote(PythonPackageDir) + " " + quote(PackagePython3) + " ";
const std::string Plugin = std::string(MLGO_BIN_DIR) + "/../lib/mlgo-corpus/libMLGOInlineAdvisor.so";

class DeviatePolicy : public ::testing::Test {
protected:
  void SetUp() override {
    if (!HavePythonPackage)
      GTEST_SKIP() << "the Python package is not built here (not in the sanitizer build)";
    if (run(Python + "-c 'import torch, flatbuffers'").ExitCode != 0)
      GTEST_SKIP() << "needs python3-torch and python3-flatbuffers (scripts/test.sh installs them)";
  }
  TempDir Work;
};

TEST_F(DeviatePolicy, TrainsOnRolloutsDecidesAsTorchInTheCompilerAndNeverDeviatingIsOz) {
  std::string corpus = makeEmbeddedBitcodeCorpus(Work.path(), mixedDecisionSources(4), "-Oz", ObjectListing::Directory);
  std::string rollouts = Work / "rollouts", work = Work / "work";
  // Every decision rolled out (forked, as the training loop runs it).
  mustRun(
      harvestCommand(corpus, rollouts,
                     "--mode=plugin --num_workers=2 --decision_sites --explore=1000 --explore_order=rollouts:first"));
  fs::create_directories(work);
  CommandResult r = run(Python + quote(std::string(MLGO_SOURCE_DIR) + "/tests/python/check_deviate_e2e.py") + " " +
                        quote(rollouts) + " " + quote(work) + " " + quote(tool("mlgo-policy")) + " " +
                        quote(tool("harvest-logs")) + " " + quote(corpus));
  ASSERT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  nlohmann::json checked = nlohmann::json::parse(r.Out);
  EXPECT_EQ(checked["rolled_out"], checked["decisions"]);
  EXPECT_GT(checked["deviations_in_compiler"].get<int>(), 0);
  EXPECT_EQ(checked["errors"].size(), 5u);

  // As a user builds a multi-file program: plain clang-22 -Oz with the
  // plugin and the policy that never deviates makes -Oz's objects, byte for
  // byte, and the deviating one a program that computes the same.
  std::string never = work + "/never/p", deviating = work + "/deviating", src = Work / "src";
  fs::create_directories(src);
  std::string plainObjects, deviatingObjects;
  bool anyDiffers = false;
  for (const auto &[name, text] : linkedProgramSources()) {
    std::string c = src + "/" + name + ".c", plain = Work / (name + ".plain.o"), same = Work / (name + ".never.o"),
                other = Work / (name + ".deviating.o");
    writeFile(c, text);
    mustRun(std::string(MLGO_CLANG) + " -Oz -c " + quote(c) + " -o " + quote(plain));
    for (const auto &[policy, object] : {std::pair{never, same}, std::pair{deviating, other}})
      mustRun(std::string(MLGO_CLANG) + " -Oz -c -fpass-plugin=" + quote(Plugin) +
              " -mllvm -mlgo-inliner-policy=tflite:" + quote(policy) + " " + quote(c) + " -o " + quote(object));
    EXPECT_TRUE(readFile(same) == readFile(plain)) << name << ": the policy that never deviates is not -Oz";
    anyDiffers |= readFile(other) != readFile(plain);
    plainObjects += " " + quote(plain);
    deviatingObjects += " " + quote(other);
  }
  EXPECT_TRUE(anyDiffers) << "the deviating policy changed no object of the program";
  mustRun(std::string(MLGO_CLANG) + " -fuse-ld=lld" + plainObjects + " -o " + quote(Work / "plain"));
  mustRun(std::string(MLGO_CLANG) + " -fuse-ld=lld" + deviatingObjects + " -o " + quote(Work / "deviating"));
  CommandResult plainRun = run(quote(Work / "plain")), deviatingRun = run(quote(Work / "deviating"));
  EXPECT_EQ(deviatingRun.ExitCode, 0);
  EXPECT_FALSE(plainRun.Out.empty());
  EXPECT_EQ(deviatingRun.Out, plainRun.Out);
}

// examples/train_inliner/deviate_loop.py, the whole loop in one command on a
// two-project corpus: rollouts, training with one project held out, every
// candidate compiled over it, the chosen policy exported and checked against
// torch, then evaluated per object and linked on a held-out program; a rerun
// redoes nothing.
TEST_F(DeviatePolicy, TheOneCommandLoopChoosesOnValidationAndEvaluatesHeldOut) {
  auto sources = mixedDecisionSources(4);
  std::string root = Work / "train";
  fs::create_directories(root);
  for (const auto &[project, range] : {std::pair{"alpha", std::pair{0, 3}}, std::pair{"beta", std::pair{3, 4}}}) {
    std::vector<std::pair<std::string, std::string>> mine(sources.begin() + range.first,
                                                          sources.begin() + range.second);
    std::string corpus =
        makeEmbeddedBitcodeCorpus(Work.path(), mine, "-Oz", ObjectListing::Directory, std::string(project) + "-");
    fs::rename(corpus, root + "/" + project);
  }
  mustRun(tool("combine-training-corpus") + " --root_dir=" + quote(root));
  std::string heldout =
      makeEmbeddedBitcodeCorpus(Work.path(), linkedProgramSources(), "-Oz", ObjectListing::Directory, "prog-");
  std::string loop = Work / "loop";
  std::string command =
      Python + quote(std::string(MLGO_SOURCE_DIR) + "/examples/train_inliner/deviate_loop.py") +
      " --train_corpus=" + quote(root) + " --validation_projects=beta --heldout=prog=" + quote(heldout) +
      " --link=" + quote("prog=" + std::string(MLGO_CLANG) + " -fuse-ld=lld {objects} -o {output}") +
      " --work=" + quote(loop) + " --explore=20 --epochs=3 --tools_dir=" + quote(std::string(MLGO_BIN_DIR));
  CommandResult r = run(command);
  ASSERT_EQ(r.ExitCode, 0) << r.Out << r.Err;
  nlohmann::json report = nlohmann::json::parse(readFile(loop + "/report.json"));
  EXPECT_EQ(report["validation"]["decisions"], 40) << "beta's one module";
  ASSERT_EQ(report["candidates"].size(), 7u);
  for (const nlohmann::json &candidate : report["candidates"])
    EXPECT_GT(candidate["validation_size"].get<int>(), 0) << candidate.dump();
  EXPECT_GT(report["validation_default_size"].get<int>(), 0);
  EXPECT_EQ(report["export_check"]["ok"], true) << report["export_check"].dump();
  EXPECT_EQ(report["export_check"]["observations"], 160);
  ASSERT_EQ(report["heldout"].size(), 1u);
  const nlohmann::json &row = report["heldout"][0];
  EXPECT_EQ(row["failed_cells"], 0) << row.dump();
  EXPECT_GT(row["policy_size"].get<int>(), 0);
  EXPECT_GT(row["linked_policy_text"].get<int>(), 0) << row.dump();
  EXPECT_TRUE(fs::exists(loop + "/policy/model.tflite"));
  CommandResult again = run(command);
  ASSERT_EQ(again.ExitCode, 0) << again.Err;
  EXPECT_NE(again.Err.find("rollouts: done before"), std::string::npos) << again.Err;
  EXPECT_NE(again.Err.find("train: done before"), std::string::npos) << again.Err;
}

} // namespace
