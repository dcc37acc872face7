// The Python package (python/, docs/python.md) against the tools, on real
// harvests: mlgo_corpus.read_log equals `training-log dump` observation by
// observation, Harvest equals the journal, read_tfrecord equals a decoder
// built on the real protobuf library; hostile inputs raise, never crash.
// The checks themselves are Python scripts in tests/python/.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

using namespace mlgo;
using namespace mlgo::test;

namespace {

#ifdef MLGO_PYTHON_PACKAGE_DIR
constexpr bool HavePackage = true;
const std::string Python = "PYTHONPATH=" + quote(MLGO_PYTHON_PACKAGE_DIR) + " " + quote(MLGO_PYTHON3) + " ";
#else
constexpr bool HavePackage = false;
const std::string Python;
#endif

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
