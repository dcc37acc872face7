// The inliner-for-size policy we ship (models/inliner-oz): it loads in the
// stock opt-22 and clang-22 through the plugin, and every decision it makes
// there is what `mlgo-policy eval` says of the same observation.
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
                          " -mllvm -mlgo-inliner-policy=tflite:" + quote(Model) + " -mllvm -mlgo-inliner-log=" +
                          quote(log) + " " + quote(c) + " -o " + quote(o));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    mustRun(std::string(MLGO_CLANG) + " -Oz -c " + quote(c) + " -o " + quote(plain));
    // Without a log nobody reads the default heuristic's decision, so the
    // plugin skips its cost analysis: the object must not change.
    std::string unlogged = Work / (name + ".unlogged.o");
    mustRun(std::string(MLGO_CLANG) + " -Oz -c -fpass-plugin=" + quote(Plugin) + " -mllvm -mlgo-inliner-policy=tflite:" +
            quote(Model) + " " + quote(c) + " -o " + quote(unlogged));
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

} // namespace
