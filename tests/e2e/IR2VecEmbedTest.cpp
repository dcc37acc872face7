// mlgo-ir2vec embed: every function's IR2Vec embedding over a corpus, equal
// to what llvm-ir2vec-22 embeddings --level=func prints for each module (it
// prints two decimals), on a C and a C++ corpus, after an opt pipeline too;
// deterministic across worker counts; the TFRecord decoded by the real
// protobuf library; a broken module is reported, not fatal.
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <sstream>

using namespace mlgo;
using namespace mlgo::test;

namespace {

std::string twoDecimals(const std::vector<double> &values) {
  std::string out;
  char buf[64];
  for (double v : values) {
    std::snprintf(buf, sizeof(buf), "%.2f", v);
    out += std::string(out.empty() ? "" : " ") + buf;
  }
  return out;
}

// llvm-ir2vec-22's "Function: NAME" / " [ v1  v2 ... ]" pairs.
std::map<std::string, std::string> llvmIr2vec(const std::string &input, const std::string &vocab) {
  CommandResult r = run("llvm-ir2vec-22 embeddings --level=func --ir2vec-vocab-path=" + quote(vocab) + " " + input);
  EXPECT_EQ(r.ExitCode, 0) << r.Err;
  std::map<std::string, std::string> out;
  std::istringstream lines(r.Out);
  std::string line, function;
  while (std::getline(lines, line)) {
    if (line.rfind("Function: ", 0) == 0) {
      function = line.substr(10);
      continue;
    }
    std::istringstream values(line);
    std::string token, joined;
    while (values >> token)
      if (token != "[" && token != "]")
        joined += (joined.empty() ? "" : " ") + token;
    if (!function.empty())
      out[function] = joined;
    function.clear();
  }
  return out;
}

std::vector<nlohmann::json> table(const std::string &path) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(readFile(path));
  std::string line;
  while (std::getline(lines, line))
    out.push_back(nlohmann::json::parse(line));
  return out;
}

class IR2VecEmbed : public InlinerCorpusSuite {
protected:
  void SetUp() override {
    mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/python/make_ir2vec_vocab.py") +
            " llvm-ir2vec-22 " + quote(Vocab) + " 12 5");
  }
  std::string embed(const std::string &corpus, const std::string &out, const std::string &flags = "") {
    return quote(tool("mlgo-ir2vec")) + " embed --corpus=" + quote(corpus) + " --vocab=" + quote(Vocab) +
           " --output=" + quote(out) + " " + flags;
  }
  // Every module's records equal llvm-ir2vec-22's, in corpus order, each
  // module closed by its sum; returns how many functions were compared.
  size_t expectEqualsLlvmIr2vec(const std::string &corpus, const std::string &out,
                                const std::function<std::string(const std::string &)> &input) {
    auto description = nlohmann::json::parse(readFile(corpus + "/corpus_description.json"));
    auto records = table(out);
    size_t at = 0, functions = 0;
    for (const std::string module : description["modules"]) {
      auto theirs = llvmIr2vec(input(module), Vocab);
      std::vector<double> sum(12, 0.0);
      size_t mine = 0;
      for (; at < records.size() && !records[at]["function"].is_null(); ++at, ++mine) {
        EXPECT_EQ(records[at]["module"], module);
        std::string name = records[at]["function"];
        std::vector<double> values = records[at]["embedding"];
        EXPECT_EQ(values.size(), 12u);
        EXPECT_EQ(twoDecimals(values), theirs[name]) << module << " " << name;
        for (size_t i = 0; i < 12 && i < values.size(); ++i)
          sum[i] += values[i];
      }
      EXPECT_EQ(mine, theirs.size()) << module;
      functions += mine;
      if (at == records.size())
        ADD_FAILURE() << module << ": no module record";
      else {
        EXPECT_EQ(records[at]["module"], module);
        EXPECT_EQ(records[at]["embedding"].get<std::vector<double>>(), sum) << module;
        ++at;
      }
    }
    EXPECT_EQ(at, records.size());
    return functions;
  }
  TempDir Work;
  std::string Vocab = Work / "vocab.json";
};

} // namespace

TEST_F(IR2VecEmbed, TablesEqualLlvmIr2vecOnCAndCxxAndAfterAPipeline) {
  std::string out = Work / "c.jsonl";
  mustRun(embed(corpus(), out, "--num_workers=2"));
  EXPECT_GT(
      expectEqualsLlvmIr2vec(corpus(), out, [&](const std::string &m) { return quote(corpus() + "/" + m + ".bc"); }),
      20u);

  std::vector<std::pair<std::string, std::string>> sources;
  for (int i = 0; i < 2; ++i)
    sources.emplace_back("cxx" + std::to_string(i),
                         "template <int N> struct Fib { static int get(int x) { return Fib<N - 1>::get(x + " +
                             std::to_string(i + 1) +
                             ") + Fib<N - 2>::get(x * 3); } };\n"
                             "template <> struct Fib<1> { static int get(int x) { return x ^ 7; } };\n"
                             "template <> struct Fib<0> { static int get(int x) { return x + 1; } };\n"
                             "int run" +
                             std::to_string(i) + "(int x) { return Fib<" + std::to_string(9 + i) + ">::get(x); }\n");
  std::string cxx = makeEmbeddedBitcodeCorpus(Work.path(), sources, "-x c++ -Oz", ObjectListing::Directory, "cxx-");
  std::string cxxOut = Work / "cxx.jsonl";
  mustRun(embed(cxx, cxxOut));
  EXPECT_GT(expectEqualsLlvmIr2vec(cxx, cxxOut, [&](const std::string &m) { return quote(cxx + "/" + m + ".bc"); }),
            10u);

  // After an opt pipeline: opt-22 -passes=... piped into llvm-ir2vec-22.
  std::string o2 = Work / "o2.jsonl";
  mustRun(embed(corpus(), o2, "--passes='default<O2>'"));
  expectEqualsLlvmIr2vec(corpus(), o2, [&](const std::string &m) {
    std::string optimized = Work / (m + ".O2.bc");
    mustRun("opt-22 '-passes=default<O2>' " + quote(corpus() + "/" + m + ".bc") + " -o " + quote(optimized));
    return quote(optimized);
  });
  EXPECT_NE(readFile(o2), readFile(out)) << "the pipeline should change the embeddings";
}

TEST_F(IR2VecEmbed, DeterministicAcrossWorkersWithATFRecordOfExamples) {
  std::string one = Work / "one.jsonl", two = Work / "two.jsonl";
  mustRun(embed(corpus(), one, "--num_workers=1 --tfrecord=" + quote(Work / "one.tfrecord")));
  mustRun(embed(corpus(), two, "--num_workers=2 --tfrecord=" + quote(Work / "two.tfrecord")));
  EXPECT_EQ(readFile(one), readFile(two));
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " --lines " +
          quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/embedding_table.schema.json") + " " + quote(one));
  EXPECT_EQ(readFile(Work / "one.tfrecord"), readFile(Work / "two.tfrecord"));
  CommandResult decoded =
      run("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/decode_sequence_examples.py") +
          " --example " + quote(Work / "one.tfrecord"));
  ASSERT_EQ(decoded.ExitCode, 0) << decoded.Err;
  auto examples = nlohmann::json::parse(decoded.Out);
  auto records = table(one);
  ASSERT_EQ(examples.size(), records.size());
  for (size_t k = 0; k < records.size(); ++k) {
    EXPECT_EQ(examples[k]["module"][0], records[k]["module"]);
    if (records[k]["function"].is_null())
      EXPECT_FALSE(examples[k].contains("function"));
    else
      EXPECT_EQ(examples[k]["function"][0], records[k]["function"]);
    std::vector<double> values = records[k]["embedding"];
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(examples[k]["embedding"][i].get<double>(), static_cast<double>(static_cast<float>(values[i])));
  }
}

TEST_F(IR2VecEmbed, ABrokenModuleIsReportedAndABadVocabularyIsAnError) {
  std::string broken = Work / "broken";
  mustRun("cp -r " + quote(corpus()) + " " + quote(broken));
  writeFile(broken + "/m2.o.bc", "BC\xc0\xde not really");
  std::string out = Work / "t.jsonl";
  CommandResult r = run(embed(broken, out, "--report=" + quote(Work / "report.json")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("m2.o: left out"), std::string::npos) << r.Err;
  auto report = nlohmann::json::parse(readFile(Work / "report.json"));
  EXPECT_EQ(report["modules"], 3);
  ASSERT_EQ(report["failed"].size(), 1u);
  EXPECT_EQ(report["failed"][0]["module"], "m2.o");
  for (const nlohmann::json &record : table(out))
    EXPECT_NE(record["module"], "m2.o");

  writeFile(Work / "bad.json", "{\"Opcodes\": 3}");
  r = run(quote(tool("mlgo-ir2vec")) + " embed --corpus=" + quote(corpus()) + " --vocab=" + quote(Work / "bad.json") +
          " --output=" + quote(Work / "x.jsonl"));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("bad.json"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "x.jsonl")) << "no table from a run that failed";
}
