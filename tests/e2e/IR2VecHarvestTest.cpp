// harvest-logs --ir2vec_vocab: the inliner's IR2Vec embedding features on a
// stock LLVM 22, checked against an independent host of opt-22's interactive
// channel (tests/python/independent_inliner_host.py, which shares no code
// with the harvester) given the same two flags; plugin and interactive logs
// byte for byte, through the compile server and exec alike; the journal
// records the vocabulary's hash; the dataset and the tools carry the vectors.
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlgo;
using namespace mlgo::test;

namespace {

std::string script(const std::string &name) { return quote(std::string(MLGO_SOURCE_DIR) + "/tests/python/" + name); }

class IR2VecHarvest : public InlinerCorpusSuite {
protected:
  void SetUp() override {
    CommandResult r =
        run("/usr/bin/python3 " + script("make_ir2vec_vocab.py") + " llvm-ir2vec-22 " + quote(Vocab) + " 8 3");
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
  }
  std::string harvest(const std::string &out, const std::string &flags) {
    return harvestCommand(corpus(), out, "--ir2vec_vocab=" + quote(Vocab) + " " + flags);
  }
  TempDir Work;
  std::string Vocab = Work / "vocab.json";
};

float floatFromHex(const std::string &hex) {
  uint32_t bits = 0;
  for (int i = 3; i >= 0; --i)
    bits = (bits << 8) | static_cast<uint32_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

} // namespace

TEST_F(IR2VecHarvest, LogsCarryTheEmbeddingsOptSendsAnIndependentHost) {
  std::string plugin = Work / "plugin", interactive = Work / "interactive";
  mustRun(harvest(plugin, "--mode=plugin"));
  mustRun(harvest(interactive, "--mode=interactive"));
  size_t compared = 0;
  for (int i = 1; i <= 4; ++i) {
    std::string m = "m" + std::to_string(i) + ".o";
    std::string log = plugin + "/logs/" + m + ".log";
    EXPECT_EQ(readFile(log), readFile(interactive + "/logs/" + m + ".log")) << m;

    CommandResult host = run("/usr/bin/python3 " + script("independent_inliner_host.py") + " opt-22 " +
                             quote(corpus() + "/" + m + ".bc") + " " + quote(Work.path()) +
                             " -ml-inliner-ir2vec-vocab-file=" + quote(Vocab) + " -ir2vec-vocab-path=" + quote(Vocab));
    ASSERT_EQ(host.ExitCode, 0) << host.Err;
    nlohmann::json sent = nlohmann::json::parse(host.Out);
    std::vector<std::string> names = sent["features"];
    // The embeddings come right before inlining_default, as LLVM orders them.
    ASSERT_GE(names.size(), 3u);
    EXPECT_EQ(names[names.size() - 3], "callee_embedding") << m;
    EXPECT_EQ(names[names.size() - 2], "caller_embedding") << m;
    EXPECT_EQ(names.back(), "inlining_default") << m;

    auto logged = readObservations(log);
    ASSERT_EQ(logged.size(), sent["observations"].size()) << m;
    for (size_t k = 0; k < logged.size(); ++k) {
      const nlohmann::json &theirs = sent["observations"][k];
      for (const std::string &name : names) {
        const std::vector<double> &ours = logged[k].Features.at(name);
        ASSERT_EQ(ours.size(), theirs[name].size()) << m << " " << name;
        for (size_t e = 0; e < ours.size(); ++e) {
          if (theirs[name][e].is_string()) // a float, as its bits
            EXPECT_EQ(static_cast<float>(ours[e]), floatFromHex(theirs[name][e])) << m << " " << name << " " << k;
          else
            EXPECT_EQ(ours[e], theirs[name][e].get<double>()) << m << " " << name << " " << k;
        }
      }
      EXPECT_EQ(logged[k]["inlining_decision"], logged[k]["inlining_default"]);
      ++compared;
    }
    EXPECT_EQ(logged.front().Features.at("callee_embedding").size(), 8u);
  }
  EXPECT_GT(compared, 1000u);

  // The journal's options header names the vocabulary by its content.
  std::string bytes = readFile(Vocab);
  std::string sha = llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)), /*LowerCase=*/true);
  nlohmann::json header = nlohmann::json::parse(
      readFile(plugin + "/harvest.jsonl").substr(0, readFile(plugin + "/harvest.jsonl").find('\n')));
  EXPECT_EQ(header["options"]["ir2vec"]["vocab_sha256"], sha) << header.dump();
  EXPECT_EQ(header["options"]["ir2vec"]["dimension"], 8);
}

TEST_F(IR2VecHarvest, TheCompileServerAndExecGiveTheSameLogsAndADifferentVocabularyIsANewHarvest) {
  std::string on = Work / "on", off = Work / "off";
  mustRun(harvest(on, "--compile_server=on"));
  mustRun(harvest(off, "--compile_server=off"));
  for (int i = 1; i <= 4; ++i) {
    std::string m = "m" + std::to_string(i) + ".o.log";
    EXPECT_EQ(readFile(on + "/logs/" + m), readFile(off + "/logs/" + m)) << m;
  }
  // Resuming the directory with another vocabulary would mix embeddings of
  // two vocabularies: refused, as any option that shapes the logs.
  std::string other = Work / "other.json";
  mustRun("/usr/bin/python3 " + script("make_ir2vec_vocab.py") + " llvm-ir2vec-22 " + quote(other) + " 8 4");
  CommandResult r = run(harvestCommand(corpus(), on, "--ir2vec_vocab=" + quote(other)));
  EXPECT_NE(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("ir2vec"), std::string::npos) << r.Err;
}

TEST_F(IR2VecHarvest, TheDatasetAndTheToolsCarryTheVectors) {
  std::string out = Work / "out";
  mustRun(harvest(out, "--modules_filter=m1 --tfrecord=" + quote(out + "/d.tfrecord")));
  auto logged = readObservations(out + "/logs/m1.o.log");
  ASSERT_FALSE(logged.empty());
  CommandResult decoded =
      run("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/decode_sequence_examples.py") + " " +
          quote(out + "/d.tfrecord"));
  ASSERT_EQ(decoded.ExitCode, 0) << decoded.Err;
  nlohmann::json records = nlohmann::json::parse(decoded.Out);
  ASSERT_EQ(records.size(), 1u);
  const nlohmann::json &steps = records[0]["callee_embedding"];
  ASSERT_EQ(steps.size(), logged.size());
  for (size_t k = 0; k < logged.size(); ++k) {
    ASSERT_EQ(steps[k].size(), 8u);
    for (size_t e = 0; e < 8; ++e)
      EXPECT_EQ(steps[k][e].get<double>(), logged[k].Features.at("callee_embedding")[e]) << k;
  }
  CommandResult dump = run(quote(tool("training-log")) + " dump " + quote(out + "/logs/m1.o.log"));
  ASSERT_EQ(dump.ExitCode, 0) << dump.Err;
  nlohmann::json first = nlohmann::json::parse(dump.Out.substr(0, dump.Out.find('\n')));
  EXPECT_EQ(first["caller_embedding"].size(), 8u);
  CommandResult vocab =
      run(quote(tool("training-log")) + " vocab --output_dir=" + quote(Work / "buckets") + " " + quote(out + "/logs"));
  ASSERT_EQ(vocab.ExitCode, 0) << vocab.Err;
  EXPECT_FALSE(exists(Work / "buckets/callee_embedding.buckets"));
  EXPECT_TRUE(exists(Work / "buckets/callee_users.buckets"));
  EXPECT_NE(vocab.Err.find("callee_embedding: an IR2Vec embedding, left out"), std::string::npos) << vocab.Err;
}

TEST_F(IR2VecHarvest, BadVocabulariesAndMisuseAreClearErrors) {
  std::string broken = Work / "broken.json";
  writeFile(broken, R"({"Opcodes": {"Ret": [1, 2]}, "Types": {"VoidTy": [1]}, "Arguments": {"Constant": [1, 2]}})");
  CommandResult r = run(harvestCommand(corpus(), Work / "a", "--ir2vec_vocab=" + quote(broken)));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("broken.json: not an IR2Vec vocabulary: \"Types\".VoidTy has 1 values where the others have 2"),
            std::string::npos)
      << r.Err;
  writeFile(broken, "{\"Opcodes\": {}}");
  r = run(harvestCommand(corpus(), Work / "b", "--ir2vec_vocab=" + quote(broken)));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("no \"Types\" section"), std::string::npos) << r.Err;
  // Empty sections as opt-22 takes them: an empty Types is refused, an
  // empty Predicates is not (mlgo-ir2vec train leaves the latter out).
  writeFile(broken, R"({"Opcodes": {"Ret": [1, 2]}, "Types": {}, "Arguments": {"Constant": [1, 2]}})");
  r = run(harvestCommand(corpus(), Work / "b2", "--ir2vec_vocab=" + quote(broken)));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("section \"Types\" is not a non-empty object"), std::string::npos) << r.Err;
  std::string noPredicates = Work / "no-predicates.json";
  writeFile(noPredicates, R"({"Opcodes": {"Ret": [1, 2]}, "Types": {"VoidTy": [1, 0]}, "Arguments": )"
                          R"({"Constant": [1, 2]}, "Predicates": {}})");
  mustRun(harvestCommand(corpus(), Work / "b3", "--modules_filter=m1 --ir2vec_vocab=" + quote(noPredicates)));
  r = run(harvestCommand(corpus(), Work / "c", "--ir2vec_vocab=" + quote(Work / "missing.json")));
  EXPECT_NE(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("missing.json"), std::string::npos) << r.Err;
  r = run(harvestCommand(corpus(), Work / "d", "--problem=regalloc-evict --ir2vec_vocab=" + quote(Vocab)));
  EXPECT_EQ(r.ExitCode, 2) << r.Err;
  EXPECT_NE(r.Err.find("inliner"), std::string::npos) << r.Err;
  r = run(harvestCommand(corpus(), Work / "e", "--ir2vec_kind=flow-aware"));
  EXPECT_EQ(r.ExitCode, 2) << r.Err;
  EXPECT_NE(r.Err.find("--ir2vec_kind needs --ir2vec_vocab"), std::string::npos) << r.Err;
}

// A tflite: policy may take the embeddings as float [dim] inputs, bound by
// name like every feature: a model that inlines where the callee's vector
// sums to more than the median sum of a default harvest decides exactly so
// at every logged call site.
TEST_F(IR2VecHarvest, TFLitePoliciesBindTheEmbeddingsByName) {
  mustRun(harvest(Work / "default", "--modules_filter=m[12]"));
  std::vector<float> sums;
  for (const std::string m : {"m1.o", "m2.o"})
    for (const LoggedObservation &o : readObservations(Work / ("default/logs/" + m + ".log"))) {
      float sum = 0;
      for (double v : o.Features.at("callee_embedding"))
        sum += static_cast<float>(v);
      sums.push_back(sum);
    }
  ASSERT_FALSE(sums.empty());
  std::sort(sums.begin(), sums.end());
  float threshold = sums[sums.size() / 2];
  std::string features = Work / "features.json";
  writeFile(features, R"({"features": [{"name": "callee_embedding", "type": "float", "shape": [8], "threshold": )" +
                          std::to_string(threshold) + "}]}");
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/tflite_models.py") +
          " embedding_sign " + quote(features) + " " + quote(Work / "policy"));
  std::string out = Work / "out";
  mustRun(harvest(out, "--mode=plugin --modules_filter=m[12] --policy=tflite:" + quote(Work / "policy")));
  size_t inlined = 0, total = 0;
  for (const std::string m : {"m1.o", "m2.o"}) {
    for (const LoggedObservation &o : readObservations(out + "/logs/" + m + ".log")) {
      float sum = 0;
      for (double v : o.Features.at("callee_embedding"))
        sum += static_cast<float>(v);
      float margin = std::abs(sum - static_cast<float>(std::stod(std::to_string(threshold))));
      if (margin > 1e-4f) // the evaluator sums in its own order
        EXPECT_EQ(o["inlining_decision"], sum > threshold ? 1 : 0) << m << " observation " << o.Index << " sum " << sum;
      inlined += o["inlining_decision"] != 0;
      ++total;
    }
  }
  EXPECT_GT(inlined, 0u);
  EXPECT_LT(inlined, total) << "the test needs both decisions";
}
