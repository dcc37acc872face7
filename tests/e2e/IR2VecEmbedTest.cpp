// mlgo-ir2vec embed: every function's IR2Vec embedding over a corpus, equal
// to what llvm-ir2vec-22 embeddings --level=func prints for each module (it
// prints two decimals), on a C and a C++ corpus, after an opt pipeline too;
// deterministic across worker counts; the TFRecord decoded by the real
// protobuf library; a broken module is reported, not fatal. With --mode=mir
// and a MIR2Vec vocabulary, every machine function equals llvm-ir2vec-22
// embeddings --mode=mir on llc-22 -stop-before=greedy's MIR of it; a
// vocabulary of the other mode or a malformed one is an error before any
// compile.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/MachineIr.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <sstream>

using namespace mlgo;
using namespace mlgo::test;

namespace {

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

class IR2VecEmbed : public SmallInlinerCorpusSuite {
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
  // A seeded MIR2Vec vocabulary of the entities llvm-ir2vec-22 lists for
  // `bitcode`'s target.
  std::string machineVocabulary(const std::string &bitcode) {
    std::string dir = Work / "vocab-mir", out = Work / "mir-vocab.json";
    mustRun("mkdir -p " + quote(dir));
    auto files = machineFunctionFiles(bitcode, dir);
    EXPECT_FALSE(files.empty());
    mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/python/make_mir2vec_vocab.py") +
            " llvm-ir2vec-22 " + quote(files.empty() ? "" : files[0].Path) + " " + quote(out) + " 7 9");
    return out;
  }
  struct MachineComparison {
    size_t Compared = 0, Classless = 0;
  };
  // Every module's records against llvm-ir2vec-22 --mode=mir, one machine
  // function at a time (llc-22's MIR split per function; see MachineIr.h).
  // Where llvm-ir2vec-22 crashes, the function must name a register of no
  // class (LLVM 22.1's MIR2Vec stops there; ours gives it a zero vector).
  MachineComparison expectMachineEqualsLlvmIr2vec(const std::string &corpus, const std::string &out,
                                                  const std::string &vocab) {
    auto description = nlohmann::json::parse(readFile(corpus + "/corpus_description.json"));
    auto records = table(out);
    MachineComparison seen;
    size_t at = 0;
    for (const std::string module : description["modules"]) {
      std::string dir = Work / ("mir-" + module);
      mustRun("mkdir -p " + quote(dir));
      auto files = machineFunctionFiles(corpus + "/" + module + ".bc", dir);
      std::vector<double> sum(7, 0.0);
      for (const MachineFunctionFile &file : files) {
        if (at == records.size() || records[at]["function"].is_null()) {
          ADD_FAILURE() << module << ": no record for machine function " << file.Function;
          continue;
        }
        EXPECT_EQ(records[at]["module"], module);
        EXPECT_EQ(records[at]["function"], file.Function) << module;
        std::vector<double> values = records[at++]["embedding"];
        EXPECT_EQ(values.size(), 7u);
        for (size_t i = 0; i < 7 && i < values.size(); ++i)
          sum[i] += values[i];
        CommandResult theirs =
            run("llvm-ir2vec-22 embeddings --mode=mir --level=func --mir2vec-vocab-path=" + quote(vocab) + " " +
                quote(file.Path));
        if (theirs.ExitCode != 0) {
          EXPECT_TRUE(hasClasslessRegister(readFile(file.Path))) << module << " " << file.Function << theirs.Err;
          ++seen.Classless;
          continue;
        }
        std::string vector = theirs.Out.substr(theirs.Out.find("Function vector:") + 16), joined, token;
        std::istringstream tokens(vector);
        while (tokens >> token)
          if (token != "[" && token != "]")
            joined += (joined.empty() ? "" : " ") + token;
        EXPECT_EQ(twoDecimals(values), joined) << module << " " << file.Function;
        ++seen.Compared;
      }
      if (at == records.size() || !records[at]["function"].is_null()) {
        ADD_FAILURE() << module << ": no module record after its machine functions";
        continue;
      }
      EXPECT_EQ(records[at]["module"], module);
      EXPECT_EQ(records[at++]["embedding"].get<std::vector<double>>(), sum) << module;
    }
    EXPECT_EQ(at, records.size());
    return seen;
  }
  TempDir Work;
  std::string Vocab = Work / "vocab.json";
};

// C sources for the machine IR tables: leaf integer functions (which
// llvm-ir2vec-22 --mode=mir can embed) beside calls and SSE arithmetic (whose
// $ssp and $mxcsr operands it cannot).
std::vector<std::pair<std::string, std::string>> machineSources() {
  return {{"mc0",
           "int table[64];\n"
           "int pick(int x) { switch (x & 7) { case 0: return 3; case 1: return x * 5; case 2: return x - 9;\n"
           "  case 3: return table[x & 63]; case 4: return x << 3; case 5: return x ^ 0x55; default: return -x; } }\n"
           "long sum(const long *a, int n) { long s = 0; for (int i = 0; i < n; ++i) s += a[i] * (i | 1); "
           "return s; }\n"
           "unsigned mix(unsigned a, unsigned b) { return (a * 2654435761u) ^ (b >> 7) ^ (a / (b | 1)); }\n"
           "int small(int x) { return x + 1; }\n"},
          {"mc1", "extern int sink(int);\nstruct P { int x, y; };\n"
                  "int caller(int v) { return sink(v) + sink(v * 3); }\n"
                  "double scale(double *a, int n, double k) { double t = 0; for (int i = 0; i < n; ++i) t += a[i] "
                  "* k; return t; }\n"
                  "int dist(struct P p, struct P q) { int dx = p.x - q.x, dy = p.y - q.y; return dx * dx + dy * dy; }\n"
                  "void fill(int *o, int n) { for (int i = 0; i < n; ++i) o[i] = i * i - n; }\n"},
          {"mc2", "static int counter;\nint bump(int k) { counter += k; return counter; }\n"
                  "int clampi(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }\n"
                  "long fact(long n) { return n < 2 ? 1 : n * fact(n - 1); }\n"}};
}

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

TEST_F(IR2VecEmbed, APipelineSkipsTheOptnoneFunctionsOfAnO0CorpusAsOptDoes) {
  // clang-22 -O0 marks every function optnone, whose function passes
  // opt-22 -passes=default<O2> skips: so must --passes.
  std::vector<std::pair<std::string, std::string>> sources = {{"n0", inlinerSource(4, 3)}};
  std::string optnone = makeEmbeddedBitcodeCorpus(Work.path(), sources, "-O0", ObjectListing::Directory, "optnone-");
  std::string o2 = Work / "optnone-o2.jsonl";
  mustRun(embed(optnone, o2, "--passes='default<O2>'"));
  EXPECT_GT(expectEqualsLlvmIr2vec(optnone, o2,
                                   [&](const std::string &m) {
                                     std::string optimized = Work / (m + ".optnone.O2.bc");
                                     mustRun("opt-22 '-passes=default<O2>' " + quote(optnone + "/" + m + ".bc") +
                                             " -o " + quote(optimized));
                                     return quote(optimized);
                                   }),
            5u);
  // The control: without optnone the same module embeds otherwise.
  std::string plain = makeEmbeddedBitcodeCorpus(Work.path(), sources, "-O0 -Xclang -disable-O0-optnone",
                                                ObjectListing::Directory, "plain-");
  std::string plainO2 = Work / "plain-o2.jsonl";
  mustRun(embed(plain, plainO2, "--passes='default<O2>'"));
  EXPECT_NE(readFile(plainO2), readFile(o2));
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

TEST_F(IR2VecEmbed, MachineTablesEqualLlvmIr2vecPerMachineFunctionOnCAndCxx) {
  std::string c = makeEmbeddedBitcodeCorpus(Work.path(), machineSources(), "-O1", ObjectListing::Directory, "mc-");
  std::string vocab = machineVocabulary(c + "/mc0.o.bc");
  std::string out = Work / "mc.jsonl";
  mustRun(quote(tool("mlgo-ir2vec")) + " embed --mode=mir --corpus=" + quote(c) + " --vocab=" + quote(vocab) +
          " --output=" + quote(out) + " --num_workers=2");
  MachineComparison seen = expectMachineEqualsLlvmIr2vec(c, out, vocab);
  EXPECT_GE(seen.Compared, 7u);
  EXPECT_GE(seen.Classless, 2u) << "calls and SSE arithmetic should be embedded too";

  std::vector<std::pair<std::string, std::string>> sources;
  for (int i = 0; i < 2; ++i)
    sources.emplace_back("mcxx" + std::to_string(i),
                         "template <typename T> struct Box { T v; T get() const { return v; } T twice() const { "
                         "return v + v; } };\n"
                         "struct Shape { virtual ~Shape(); virtual double area(double s) const = 0; };\n"
                         "int boxes" +
                             std::to_string(i) + "(int x) { return Box<int>{x}.twice() * " + std::to_string(i + 2) +
                             " + Box<long>{x}.get(); }\n"
                             "double areas" +
                             std::to_string(i) +
                             "(const Shape **s, int n, double k) { double t = 0; for (int j = 0; j < n; ++j) t += "
                             "s[j]->area(k); return t; }\n");
  std::string cxx = makeEmbeddedBitcodeCorpus(Work.path(), sources, "-x c++ -O1", ObjectListing::Directory, "mcxx-");
  std::string cxxOut = Work / "mcxx.jsonl";
  mustRun(quote(tool("mlgo-ir2vec")) + " embed --mode=mir --corpus=" + quote(cxx) + " --vocab=" + quote(vocab) +
          " --output=" + quote(cxxOut) + " --passes='default<O2>'");
  // After --passes: the optimized module is what llc-22 compiles.
  auto description = nlohmann::json::parse(readFile(cxx + "/corpus_description.json"));
  std::string optimized = Work / "mcxx-o2";
  mustRun("cp -r " + quote(cxx) + " " + quote(optimized));
  for (const std::string module : description["modules"])
    mustRun("opt-22 '-passes=default<O2>' " + quote(cxx + "/" + module + ".bc") + " -o " +
            quote(optimized + "/" + module + ".bc"));
  seen = expectMachineEqualsLlvmIr2vec(optimized, cxxOut, vocab);
  EXPECT_GE(seen.Compared, 2u);
  EXPECT_GE(seen.Classless, 2u);
}

TEST_F(IR2VecEmbed, AVocabularyOfTheOtherModeOrAMalformedMir2VecOneIsAnErrorBeforeAnyCompile) {
  // A corpus with a module that cannot compile: any compile would report it.
  std::string broken = Work / "broken";
  mustRun("cp -r " + quote(corpus()) + " " + quote(broken));
  writeFile(broken + "/m2.o.bc", "BC\xc0\xde not really");
  std::string mirVocab = machineVocabulary(corpus() + "/m1.o.bc");
  auto embed = [&](const std::string &vocab, const std::string &flags) {
    CommandResult r = run(quote(tool("mlgo-ir2vec")) + " embed --corpus=" + quote(broken) + " --vocab=" + quote(vocab) +
                          " --output=" + quote(Work / "x.jsonl") + " " + flags);
    EXPECT_EQ(r.ExitCode, 1) << r.Err;
    EXPECT_EQ(r.Err.find("left out"), std::string::npos) << "no module should be compiled: " << r.Err;
    EXPECT_FALSE(exists(Work / "x.jsonl"));
    return r.Err;
  };
  std::string err = embed(Vocab, "--mode=mir");
  EXPECT_NE(err.find(Vocab + ": an IR2Vec vocabulary"), std::string::npos) << err;
  EXPECT_NE(err.find("--mode=llvm"), std::string::npos) << err;
  err = embed(mirVocab, "");
  EXPECT_NE(err.find(mirVocab + ": a MIR2Vec vocabulary"), std::string::npos) << err;
  EXPECT_NE(err.find("--mode=mir"), std::string::npos) << err;
  err = embed(mirVocab, "--mode=mir --kind=flow-aware");
  EXPECT_NE(err.find("symbolic embeddings only"), std::string::npos) << err;

  auto seeds = nlohmann::json::parse(readFile(mirVocab));
  struct Case {
    std::string Name, Expected;
    std::function<void(nlohmann::json &)> Break;
  };
  std::vector<Case> cases = {
      {"no-virtual.json", "VirtualRegisters", [](nlohmann::json &j) { j.erase("VirtualRegisters"); }},
      {"ragged.json", "PhysicalRegisters", [](nlohmann::json &j) { j["PhysicalRegisters"].begin()->push_back(0.5); }},
      {"widths.json", "section 'CommonOperands' has rows of 8 values, 'Opcodes' of 7",
       [](nlohmann::json &j) {
         for (auto &row : j["CommonOperands"])
           row.push_back(0.25);
       }},
      {"strings.json", "Opcodes", [](nlohmann::json &j) { j["Opcodes"].begin()->front() = "x"; }},
  };
  for (const Case &c : cases) {
    nlohmann::json bad = seeds;
    c.Break(bad);
    std::string path = Work / c.Name;
    writeFile(path, bad.dump());
    err = embed(path, "--mode=mir");
    EXPECT_NE(err.find(path + ": not a MIR2Vec vocabulary"), std::string::npos) << err;
    EXPECT_NE(err.find(c.Expected), std::string::npos) << c.Name << ": " << err;
  }
  writeFile(Work / "text.json", "Opcodes: no");
  err = embed(Work / "text.json", "--mode=mir");
  EXPECT_NE(err.find(Work / "text.json" + ": not a vocabulary: not JSON"), std::string::npos) << err;
}
