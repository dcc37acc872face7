// The Python package (python/, docs/python.md) against the tools, on real
// harvests: mlgo_corpus.read_log equals `training-log dump` observation by
// observation, Harvest equals the journal, read_tfrecord equals a decoder
// built on the real protobuf library; hostile inputs raise, never crash.
// The checks themselves are Python scripts in tests/python/.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

using namespace mlgo;
using namespace mlgo::test;

namespace {

#ifdef MLGO_PYTHON_PACKAGE_DIR
constexpr bool HavePackage = true;
const std::string PackageDir = MLGO_PYTHON_PACKAGE_DIR, Python3 = MLGO_PYTHON3;
#else
constexpr bool HavePackage = false;
const std::string PackageDir, Python3;
#endif
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
