// harvest-logs --policies (issue #23, batch evaluation): K policies over one
// seeded module sample, sharing one baseline cache. Every cell must equal
// what a separate harvest of that policy gives; the same batch twice gives
// the same table; a policy that fails costs its own cells only.
#include "mlgo/log/TrainingLog.h"

#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

using namespace mlgo;
using namespace mlgo::test;

namespace {

const std::string ModelWriter =
    "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/tflite_models.py");
const std::string Sample = " --sampling_rate=0.75 --seed=5 --num_workers=2";

class PolicyBatch : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    makeHarvestCorpus(Fixture->path(), 8);
    // Two fixed policies: small networks over the inliner's features.
    mustRun(harvestCommand(corpus(), *Fixture / "features-run", "--sampling_rate=0.25"));
    std::string log;
    for (const auto &[module, record] : journalByModule(*Fixture / "features-run"))
      if (record["log_written"] == true)
        log = *Fixture / ("features-run/logs/" + module + ".log");
    ASSERT_FALSE(log.empty());
    auto reader = TrainingLogReader::open(log);
    ASSERT_TRUE(static_cast<bool>(reader));
    ASSERT_TRUE(static_cast<bool>((*reader)->next()));
    nlohmann::json features;
    features["features"] = nlohmann::json::array();
    for (const TensorSpec &spec : (*reader)->header().Features)
      features["features"].push_back(
          {{"name", spec.Name}, {"type", elementTypeName(spec.Type)}, {"shape", spec.Shape}});
    writeFile(*Fixture / "features.json", features.dump());
    for (int seed : {1, 2})
      mustRun(ModelWriter + " inliner " + quote(*Fixture / "features.json") + " " + quote(model(seed)) + " --seed " +
              std::to_string(seed));
  }
  static void TearDownTestSuite() { delete Fixture; }
  static std::string corpus() { return *Fixture / "corpus"; }
  static std::string model(int seed) { return *Fixture / ("models/p" + std::to_string(seed)); }

  static std::vector<nlohmann::json> table(const std::string &out) {
    std::vector<nlohmann::json> cells;
    std::istringstream lines(readFile(out + "/evaluation.jsonl"));
    for (std::string line; std::getline(lines, line);)
      cells.push_back(nlohmann::json::parse(line));
    return cells;
  }

  TempDir Work;
  static TempDir *Fixture;
};
TempDir *PolicyBatch::Fixture = nullptr;

TEST_F(PolicyBatch, EveryCellEqualsASeparateHarvestAndTheTableIsDeterministic) {
  std::vector<std::string> specs = {"default", "tflite:" + model(1), "tflite:" + model(2)};
  std::string list = specs[0] + "," + specs[1] + "," + specs[2];
  CommandResult r = run(harvestCommand(corpus(), Work / "batch", "--policies=" + quote(list) + Sample));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  std::vector<nlohmann::json> cells = table(Work / "batch");
  ASSERT_EQ(cells.size(), 3u * 6u); // int(8 * 0.75) modules per policy

  for (size_t k = 0; k < specs.size(); ++k) {
    std::string alone = Work / ("alone" + std::to_string(k));
    mustRun(harvestCommand(corpus(), alone, "--policy=" + quote(specs[k]) + Sample));
    auto journal = journalByModule(alone);
    size_t seen = 0;
    for (const nlohmann::json &cell : cells) {
      if (cell["policy_index"] != k)
        continue;
      ++seen;
      std::string m = cell["module"];
      SCOPED_TRACE(specs[k] + " " + m);
      ASSERT_TRUE(journal.count(m));
      const nlohmann::json &record = journal[m];
      EXPECT_EQ(cell["policy"], specs[k]);
      EXPECT_EQ(cell["status"], "ok");
      for (const char *key : {"status", "native_size", "default_size", "reward", "decisions"})
        EXPECT_EQ(cell[key], record[key]) << key;
      EXPECT_TRUE(readFile(alone + "/logs/" + m + ".log") ==
                  readFile(Work / ("batch/policies/" + std::to_string(k) + "/logs/" + m + ".log")));
    }
    EXPECT_EQ(seen, journal.size());
  }
  // The tflite policies change sizes: the comparison is not vacuous.
  bool differs = false;
  for (const nlohmann::json &cell : cells)
    differs |= cell["policy_index"] != 0 && cell["native_size"] != cell["default_size"];
  EXPECT_TRUE(differs);
  // No baseline compile for the whole batch: the default policy's own
  // sizes are the baselines, stored for the two tflite policies.
  nlohmann::json summary = nlohmann::json::parse(readFile(Work / "batch/evaluation.json"));
  EXPECT_EQ(summary["baselines"]["computed"], 0);
  EXPECT_EQ(summary["baselines"]["stored"], 6);
  EXPECT_EQ(summary["baselines"]["cached"], 12);
  EXPECT_EQ(summary["policies"].size(), 3u);
  EXPECT_EQ(summary["policies"][1]["ok"], 6);

  std::string formats = std::string(MLGO_SOURCE_DIR) + "/corpus_formats/";
  std::string check = "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " ";
  mustRun(check + "--lines " + quote(formats + "evaluation_cell.schema.json") + " " +
          quote(Work / "batch/evaluation.jsonl"));
  mustRun(check + quote(formats + "evaluation_summary.schema.json") + " " + quote(Work / "batch/evaluation.json"));
  mustRun(check + quote(formats + "harvest_summary.schema.json") + " " + quote(Work / "batch/policies/1/summary.json"));
  for (const auto &entry : std::filesystem::recursive_directory_iterator(Work / "batch/baselines"))
    if (entry.is_regular_file())
      mustRun(check + quote(formats + "baseline_cache_entry.schema.json") + " " + quote(entry.path().string()));

  mustRun(harvestCommand(corpus(), Work / "again", "--policies=" + quote(list) + Sample));
  EXPECT_EQ(readFile(Work / "again/evaluation.jsonl"), readFile(Work / "batch/evaluation.jsonl"));
}

TEST_F(PolicyBatch, AFailingPolicyCostsItsOwnCellsOnly) {
  std::string broken = Work / "broken";
  writeFile(broken + "/model.tflite", "TFL3 but not a model");
  writeFile(broken + "/output_spec.json", "[]");
  std::string list = "tflite:" + model(1) + ",tflite:" + broken + ",tflite:/no/such/policy,default";
  CommandResult r = run(harvestCommand(corpus(), Work / "batch", "--policies=" + quote(list) + Sample));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  std::map<size_t, std::pair<size_t, size_t>> okAndNot;
  for (const nlohmann::json &cell : table(Work / "batch")) {
    auto &[ok, notOk] = okAndNot[cell["policy_index"].get<size_t>()];
    (cell["status"] == "ok" ? ok : notOk) += 1;
  }
  EXPECT_EQ(okAndNot[0], std::make_pair(size_t(6), size_t(0)));
  EXPECT_EQ(okAndNot[1], std::make_pair(size_t(0), size_t(6)));
  EXPECT_EQ(okAndNot[2], std::make_pair(size_t(0), size_t(6)));
  EXPECT_EQ(okAndNot[3], std::make_pair(size_t(6), size_t(0)));
  nlohmann::json summary = nlohmann::json::parse(readFile(Work / "batch/evaluation.json"));
  EXPECT_NE(summary["policies"][2]["error"].get<std::string>().find("/no/such/policy"), std::string::npos);
  // --strict says some cell failed.
  r = run(harvestCommand(corpus(), Work / "strict", "--strict --policies=" + quote(list) + Sample));
  EXPECT_EQ(r.ExitCode, 3) << r.Err;
}

} // namespace
