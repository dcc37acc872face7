// The inliner-for-size policies we ship (models/inliner-oz and
// models/inliner-oz-deviate): they load in the stock opt-22 and clang-22
// through the plugin, and every decision they make there is what
// `mlgo-policy eval` says of the same observation (for the deviating one,
// with the default's cost margin the plugin fed, from the sites file).
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Model = std::string(MLGO_SOURCE_DIR) + "/models/inliner-oz";
const std::string Plugin = std::string(MLGO_BIN_DIR) + "/../lib/mlgo-corpus/libMLGOInlineAdvisor.so";

// Each logged decision of `log` against mlgo-policy eval's on the log's own
// observations; returns how many were compared.
size_t expectLogDecidesAsEval(const std::string &log) {
  CommandResult eval = run(tool("mlgo-policy") + " eval " + quote(Model) + " --log " + quote(log));
  EXPECT_EQ(eval.ExitCode, 0) << eval.Err;
  std::istringstream answers(eval.Out);
  CommandResult dump = run(tool("training-log") + " dump " + quote(log));
  EXPECT_EQ(dump.ExitCode, 0) << dump.Err;
  std::istringstream logged(dump.Out);
  size_t compared = 0;
  std::string a, l;
  while (std::getline(answers, a) && std::getline(logged, l)) {
    nlohmann::json answer = nlohmann::json::parse(a), observation = nlohmann::json::parse(l);
    const nlohmann::json &decision = observation["inlining_decision"];
    int64_t taken = decision.is_array() ? decision[0].get<int64_t>() : decision.get<int64_t>();
    EXPECT_EQ(answer["decision"].get<int64_t>() != 0, taken != 0) << log << " observation " << compared;
    ++compared;
  }
  EXPECT_FALSE(std::getline(answers, a)) << "mlgo-policy answered more observations than the log holds";
  EXPECT_FALSE(std::getline(logged, l)) << "the log holds more observations than mlgo-policy answered";
  return compared;
}

class ShippedModel : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(Model + "/model.tflite")) << Model;
    ASSERT_TRUE(fs::exists(Model + "/output_spec.json")) << Model;
  }
  TempDir Work;
};

TEST_F(ShippedModel, DecidesInOptAsMlgoPolicyEvalDoes) {
  std::string corpus = makeHarvestCorpus(Work.path(), 3);
  std::string out = Work / "opt";
  CommandResult r = run(harvestCommand(corpus, out, "--mode=plugin --policy=tflite:" + quote(Model)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  size_t compared = 0;
  for (const auto &[module, record] : journalByModule(out)) {
    EXPECT_EQ(record["status"], "ok") << record.dump();
    if (record["log_written"])
      compared += expectLogDecidesAsEval(out + "/logs/" + module + ".log");
  }
  EXPECT_GT(compared, 100u);
}

// As a user deploys it: plain clang-22 -Oz with the plugin and the policy,
// no harvest; the program it builds runs as the default-built one does.
TEST_F(ShippedModel, BuildsAWorkingProgramInClangAsMlgoPolicyEvalDecides) {
  std::string src = Work / "src";
  fs::create_directories(src);
  std::string objects, plainObjects;
  size_t compared = 0;
  for (const auto &[name, text] : linkedProgramSources()) {
    std::string c = src + "/" + name + ".c", o = Work / (name + ".o"), plain = Work / (name + ".plain.o");
    std::string log = Work / (name + ".log");
    writeFile(c, text);
    CommandResult r = run(std::string(MLGO_CLANG) + " -Oz -c -fpass-plugin=" + quote(Plugin) +
                          " -mllvm -mlgo-inliner-policy=tflite:" + quote(Model) +
                          " -mllvm -mlgo-inliner-log=" + quote(log) + " " + quote(c) + " -o " + quote(o));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    mustRun(std::string(MLGO_CLANG) + " -Oz -c " + quote(c) + " -o " + quote(plain));
    // Without a log nobody reads the default heuristic's decision, so the
    // plugin skips its cost analysis: the object must not change.
    std::string unlogged = Work / (name + ".unlogged.o");
    mustRun(std::string(MLGO_CLANG) + " -Oz -c -fpass-plugin=" + quote(Plugin) +
            " -mllvm -mlgo-inliner-policy=tflite:" + quote(Model) + " " + quote(c) + " -o " + quote(unlogged));
    EXPECT_TRUE(readFile(unlogged) == readFile(o)) << name << ": the log changed the code";
    if (fs::exists(log))
      compared += expectLogDecidesAsEval(log);
    objects += " " + quote(o);
    plainObjects += " " + quote(plain);
  }
  EXPECT_GT(compared, 0u);
  mustRun(std::string(MLGO_CLANG) + " -fuse-ld=lld" + objects + " -o " + quote(Work / "prog"));
  mustRun(std::string(MLGO_CLANG) + " -fuse-ld=lld" + plainObjects + " -o " + quote(Work / "plain"));
  CommandResult policy = run(quote(Work / "prog")), plain = run(quote(Work / "plain"));
  EXPECT_EQ(policy.ExitCode, 0);
  EXPECT_FALSE(policy.Out.empty());
  EXPECT_EQ(policy.Out, plain.Out) << "the policy-built program computes otherwise";
}

const std::string DeviateModel = std::string(MLGO_SOURCE_DIR) + "/models/inliner-oz-deviate";

// What the plugin feeds a model as cost_margin (TFLiteInProcessPolicy.cpp).
int64_t marginInput(const nlohmann::json &site) {
  if (!site["cost_margin"].is_null())
    return site["cost_margin"].get<int64_t>();
  return site["default"].get<bool>() ? (int64_t(1) << 31) : -(int64_t(1) << 31);
}

// As a user deploys it: plain clang-22 -Oz with the plugin and the policy
// that deviates from -Oz only where it expects a gain; each decision is what
// mlgo-policy eval says of the logged features, default and margin, and the
// program runs as the -Oz one does.
TEST(ShippedDeviateModel, BuildsAWorkingProgramInClangAsMlgoPolicyEvalDecides) {
  ASSERT_TRUE(fs::exists(DeviateModel + "/model.tflite")) << DeviateModel;
  TempDir work;
  std::string src = work / "src";
  fs::create_directories(src);
  std::string objects, plainObjects;
  size_t compared = 0;
  for (const auto &[name, text] : linkedProgramSources()) {
    std::string c = src + "/" + name + ".c", o = work / (name + ".o"), plain = work / (name + ".plain.o");
    std::string log = work / (name + ".log"), sites = work / (name + ".sites.jsonl");
    writeFile(c, text);
    mustRun(std::string(MLGO_CLANG) + " -Oz -c -fpass-plugin=" + quote(Plugin) +
            " -mllvm -mlgo-inliner-policy=tflite:" + quote(DeviateModel) + " -mllvm -mlgo-inliner-log=" + quote(log) +
            " -mllvm -mlgo-inliner-sites=" + quote(sites) + " " + quote(c) + " -o " + quote(o));
    mustRun(std::string(MLGO_CLANG) + " -Oz -c " + quote(c) + " -o " + quote(plain));
    objects += " " + quote(o);
    plainObjects += " " + quote(plain);
    if (!fs::exists(log))
      continue;
    CommandResult dump = run(tool("training-log") + " dump " + quote(log));
    ASSERT_EQ(dump.ExitCode, 0) << dump.Err;
    std::istringstream logged(dump.Out), siteLines(readFile(sites));
    std::string observations, line, siteLine;
    std::vector<int64_t> taken;
    while (std::getline(logged, line)) {
      ASSERT_TRUE(std::getline(siteLines, siteLine)) << name << ": fewer sites than decisions";
      nlohmann::json observation = nlohmann::json::parse(line);
      observation["cost_margin"] = marginInput(nlohmann::json::parse(siteLine));
      const nlohmann::json &decision = observation["inlining_decision"];
      taken.push_back(decision.is_array() ? decision[0].get<int64_t>() : decision.get<int64_t>());
      observation.erase("inlining_decision");
      observations += observation.dump() + "\n";
    }
    std::string file = work / (name + ".observations.jsonl");
    writeFile(file, observations);
    CommandResult eval = run(tool("mlgo-policy") + " eval " + quote(DeviateModel) + " --observations=" + quote(file));
    ASSERT_EQ(eval.ExitCode, 0) << eval.Err;
    std::istringstream answers(eval.Out);
    for (int64_t decision : taken) {
      ASSERT_TRUE(std::getline(answers, line)) << name;
      EXPECT_EQ(nlohmann::json::parse(line)["decision"].get<int64_t>() != 0, decision != 0)
          << name << " observation " << compared;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0u);
  mustRun(std::string(MLGO_CLANG) + " -fuse-ld=lld" + objects + " -o " + quote(work / "prog"));
  mustRun(std::string(MLGO_CLANG) + " -fuse-ld=lld" + plainObjects + " -o " + quote(work / "plain"));
  CommandResult policy = run(quote(work / "prog")), plain = run(quote(work / "plain"));
  EXPECT_EQ(policy.ExitCode, 0);
  EXPECT_FALSE(policy.Out.empty());
  EXPECT_EQ(policy.Out, plain.Out) << "the policy-built program computes otherwise";
}

} // namespace
