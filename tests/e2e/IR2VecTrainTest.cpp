// mlgo-ir2vec train: native TransE on mlgo-ir2vec triplets' files. Its
// quality matches an independent TransE in PyTorch (tests/python/
// transe_oracle.py: same model and hyperparameters, torch's own random
// streams): mean held-out hits@10 in 6-fold cross-validation with 3 seeds
// within 2 points (or better), both far above a random vocabulary. The
// vocabulary it writes is one opt-22 and harvest-logs --ir2vec_vocab use;
// a seed and a thread count give the same file. From triplets --mode=mir it
// writes a MIR2Vec vocabulary (sections and keys as an independent seeded
// one's) that embed --mode=mir and llvm-ir2vec-22 --mode=mir both use, to
// the same embeddings, with entities left out too; triplets of no known
// layout are an error naming the file.
#include "support/HarvestCorpus.h"
#include "support/MachineIr.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace mlgo;
using namespace mlgo::test;

namespace {

// Many kinds of instructions, types, operands, predicates and argument
// positions: a few hundred distinct triplets from two modules.
const char *RichSource = R"C(
#include <string.h>
#include <stdarg.h>
struct P { int x; double y; char name[8]; struct P *next; };
typedef int (*Fn)(int, int);
static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
int apply(Fn f, int a, int b) { return f(a, b); }
double mix(struct P *p, int n, float k) {
  double s = 0;
  for (int i = 0; i < n; ++i) {
    switch (p[i].x & 7) {
    case 0: s += p[i].y * k; break;
    case 1: s -= p[i].y / (k + 1); break;
    case 2: s = s > p[i].y ? s : p[i].y; break;
    case 3: s += (double)(unsigned)p[i].x; break;
    default: s *= 1.5;
    }
    if (p[i].y < 0.0 || p[i].y != p[i].y) s = -s;
    if ((unsigned)p[i].x > 100u && p[i].x <= 1000 && p[i].x >= -5) s += 1;
  }
  return s;
}
int sum(int n, ...) { va_list ap; va_start(ap, n); int s = 0; for (int i = 0; i < n; ++i) s += va_arg(ap, int); va_end(ap); return s; }
void copy(struct P *d, const struct P *s, unsigned long n) { memcpy(d, s, n * sizeof *s); memset(d, 0, 4); }
long bits(long a, unsigned long b, short c, unsigned char d) { return (a << 3) ^ (long)(b >> 2) | (c & d) | (a % 7) | (long)(b / 3u) | -a; }
float conv(double a, long b, unsigned u) { return (float)a + (float)b + (float)u + (float)(int)a + (float)(unsigned long)a; }
int cmpf(float a, float b) { return (a == b) + (a < b) * 2 + (a >= b) * 4 + (a != b) * 8 + (a > b) * 16 + (a <= b) * 32; }
int cmpu(unsigned a, unsigned b) { return (a < b) + (a <= b) * 2 + (a > b) * 4 + (a >= b) * 8 + (a == b) + (a != b); }
int use(int a, int b) { return apply(add, a, b) + apply(sub, a, b) + sum(3, a, b, a * b); }
struct P *walk(struct P *p) { while (p && p->next) p = p->next; return p; }
int arr(int (*m)[4], int i, int j) { int t[16]; for (int k = 0; k < 16; ++k) t[k] = m[k / 4][k % 4] * i; return t[(i + j) & 15]; }
_Bool pick(_Bool c, int a) { return c ? a > 3 : a < -3; }
)C";
const char *RichCallsSource = R"C(
#include <math.h>
extern int ext16(int, double, int *, long, float, char, short, unsigned, double, int, long, int *, double, float, int, long);
extern void sink(void *, ...);
typedef struct { float v[4]; int n; } Vec;
static double g;
int many(int a, double b, int *p, long c, float d, char e, short f, unsigned h) {
  int r = ext16(a, b, p, c, d, e, f, h, 1.0, 2, 3L, p, b * 2, d + 1, a ^ 5, c - 1);
  r += ext16(1, 2.0, &r, 4, 5.f, 'c', 7, 8u, g, a, c, 0, 0.5, 1.5f, 9, 10);
  sink(p, a, b, c, d, &g, many);
  return r;
}
double maths(double x, float y) { return sqrt(x) + sinf(y) + fabs(x - y) + floor(x) + pow(x, 2.5) + fmax(x, y); }
Vec vadd(Vec a, Vec b) { Vec r; for (int i = 0; i < 4; ++i) r.v[i] = a.v[i] + b.v[i] * (float)b.n; r.n = a.n > b.n ? a.n : b.n; return r; }
unsigned long long wide(unsigned long long a, __int128 b, unsigned __int128 c) { return a * (unsigned long long)(b >> 3) + (unsigned long long)(c % 11u); }
int loops(int n, int *a, int *b) {
  int s = 0, i = 0;
  do { s += a[i] * b[n - i - 1]; } while (++i < n);
  for (int j = n; j-- > 0;) { if (a[j] == 0) continue; if (a[j] < 0) break; s -= a[j] / (b[j] | 1); }
  goto done;
done:
  return s;
}
int counter;
int atomics(int x) { counter += x; return __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST) + __sync_val_compare_and_swap(&counter, x, 0); }
int bitsmore(unsigned x) { return __builtin_popcount(x) + __builtin_clz(x | 1) + __builtin_ctz(x | 8) + (int)__builtin_bswap32(x); }
float fcmp(double a, double b) { return (float)(isnan(a) + isgreater(a, b) * 2 + isless(a, b) * 4 + islessgreater(a, b) * 8 + isunordered(a, b) * 16); }
void alloc(unsigned long n, void (*use)(void *)) { char *p = __builtin_alloca(n & 63); __builtin_memcpy(p, &n, sizeof n); use(p); }
)C";

std::string python(const std::string &script) {
  return "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/python/" + script) + " ";
}

class IR2VecTrain : public InlinerCorpusSuite {
protected:
  // Triplets of four copies of each rich module (each at its own seeded opt
  // level), shuffled with a fixed seed and cut into six folds: fold k holds
  // out the k-th sixth as test2id.txt and trains on the rest (train/), so
  // that every triplet is held out once. Built without optnone (-O0 alone
  // marks every function optnone, which opt leaves as it is), so that the
  // opt levels vary the triplets.
  void SetUp() override {
    std::vector<std::pair<std::string, std::string>> sources;
    for (int i = 0; i < 4; ++i) {
      sources.emplace_back("richa" + std::to_string(i), RichSource);
      sources.emplace_back("richb" + std::to_string(i), RichCallsSource);
    }
    std::string corpus =
        makeEmbeddedBitcodeCorpus(Work.path(), sources, "-O0 -Xclang -disable-O0-optnone -Xclang -disable-llvm-passes",
                                  ObjectListing::Directory, "rich-");
    mustRun(quote(tool("mlgo-ir2vec")) + " triplets --corpus=" + quote(corpus) +
            " --output_dir=" + quote(Work / "all") + " --seed=2");
    std::istringstream in(readFile(Work / "all/train2id.txt"));
    std::string line;
    std::getline(in, line);
    std::vector<std::string> rows;
    while (std::getline(in, line))
      rows.push_back(line);
    std::shuffle(rows.begin(), rows.end(), std::mt19937(5));
    Triplets = rows.size();
    for (size_t k = 0; k < Folds; ++k) {
      size_t from = rows.size() * k / Folds, to = rows.size() * (k + 1) / Folds;
      std::string train, test;
      for (size_t i = 0; i < rows.size(); ++i)
        (i >= from && i < to ? test : train) += rows[i] + "\n";
      std::string fold = Work / ("fold" + std::to_string(k));
      writeFile(fold + "/train/train2id.txt", std::to_string(rows.size() - (to - from)) + "\n" + train);
      writeFile(fold + "/test2id.txt", std::to_string(to - from) + "\n" + test);
      for (const char *f : {"entity2id.txt", "relation2id.txt"})
        writeFile(fold + "/train/" + f, readFile(Work / ("all/" + std::string(f))));
    }
  }
  static constexpr size_t Folds = 6;
  nlohmann::json trainOnce(const std::string &out, const std::string &flags, size_t fold = 0) {
    std::string dir = Work / ("fold" + std::to_string(fold));
    mustRun(quote(tool("mlgo-ir2vec")) + " train --input_dir=" + quote(dir + "/train") + " --output=" + quote(out) +
            " --test_file=" + quote(dir + "/test2id.txt") + " --report=" + quote(out + ".report.json") + " " + flags);
    return nlohmann::json::parse(readFile(out + ".report.json"));
  }
  TempDir Work;
  size_t Triplets = 0;
};

} // namespace

TEST_F(IR2VecTrain, HeldOutHitsAt10MatchAnIndependentTorchTransE) {
  if (run("/usr/bin/python3 -c 'import torch'").ExitCode != 0)
    GTEST_SKIP() << "needs python3-torch (scripts/test.sh installs it)";
  ASSERT_GT(Triplets, 350u) << "the comparison needs a few hundred triplets";
  const std::string Hyper = " --dim=32 --epochs=2000 --batch_size=256 --learning_rate=0.01 --margin=1";
  const std::vector<int> Seeds = {1, 2, 3};
  double ours = 0;
  std::string folds;
  for (size_t k = 0; k < Folds; ++k) {
    folds += " " + quote(Work / ("fold" + std::to_string(k)));
    for (int seed : Seeds)
      ours += trainOnce(Work / ("v" + std::to_string(k) + "-" + std::to_string(seed) + ".json"),
                        Hyper + " --seed=" + std::to_string(seed), k)["hits_at_10_test"]
                  .get<double>() /
              static_cast<double>(Folds * Seeds.size());
  }
  CommandResult torch = run(python("transe_oracle.py") + "32 2000 256 0.01 1.0 1,2,3" + folds);
  ASSERT_EQ(torch.ExitCode, 0) << torch.Err;
  double theirs = nlohmann::json::parse(torch.Out)["hits_at_10_test"].get<double>();
  std::cerr << "held-out hits@10 over " << Folds << " folds x " << Seeds.size() << " seeds: ours " << ours << ", torch "
            << theirs << "\n";
  // Within 2 points of the reference, or better.
  EXPECT_GE(ours, theirs - 0.02);
  // Both far above an untrained (random) vocabulary: one epoch at rate 0.
  double random = 0;
  for (size_t k = 0; k < Folds; ++k)
    random += trainOnce(Work / ("r" + std::to_string(k) + ".json"), " --dim=32 --epochs=1 --learning_rate=0 --seed=1",
                        k)["hits_at_10_test"]
                  .get<double>() /
              static_cast<double>(Folds);
  std::cerr << "held-out hits@10 of a random vocabulary: " << random << "\n";
  EXPECT_GT(ours, random + 0.15);
  EXPECT_GT(theirs, random + 0.15);
}

TEST_F(IR2VecTrain, TheVocabularyIsOneLLVMAndAHarvestUseAndASeedGivesTheSameFile) {
  std::string a = Work / "a.json", b = Work / "b.json", c = Work / "c.json";
  trainOnce(a, "--dim=16 --epochs=200 --seed=7 --num_workers=2");
  trainOnce(b, "--dim=16 --epochs=200 --seed=7 --num_workers=2");
  trainOnce(c, "--dim=16 --epochs=200 --seed=8 --num_workers=2");
  EXPECT_EQ(readFile(a), readFile(b));
  EXPECT_NE(readFile(a), readFile(c));
  auto vocab = nlohmann::json::parse(readFile(a));
  for (const char *section : {"Opcodes", "Types", "Arguments"})
    ASSERT_TRUE(vocab.contains(section)) << section;
  EXPECT_EQ(vocab["Opcodes"]["Add"].size(), 16u);
  CommandResult printed = run("opt-22 '-passes=print<ir2vec>' -ir2vec-vocab-path=" + quote(a) + " " +
                              quote(corpus() + "/m1.o.bc") + " -disable-output");
  ASSERT_EQ(printed.ExitCode, 0) << printed.Err;
  EXPECT_NE((printed.Out + printed.Err).find("Function vector"), std::string::npos) << printed.Err;
  mustRun(harvestCommand(corpus(), Work / "h", "--modules_filter=m1 --ir2vec_vocab=" + quote(a)));
  auto journal = journalByModule(Work / "h");
  EXPECT_EQ(journal["m1.o"]["status"], "ok") << journal["m1.o"].dump();

  writeFile(Work / "broken/entity2id.txt", "2\nRet\t0\nBr\t1\n");
  writeFile(Work / "broken/relation2id.txt", "1\nType\t0\n");
  writeFile(Work / "broken/train2id.txt", "1\n0 5 0\n");
  CommandResult r = run(quote(tool("mlgo-ir2vec")) + " train --input_dir=" + quote(Work / "broken") +
                        " --output=" + quote(Work / "x.json"));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("train2id.txt: line 2: an id beyond"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "x.json"));
}

namespace {

// Integer leaf functions without calls or SSE, which llvm-ir2vec-22
// --mode=mir reads whole (it crashes on both).
const std::vector<std::pair<std::string, std::string>> IntegerSources = {
    {"i0", "int table[32];\nint pick(int x) { switch (x & 7) { case 0: return 3; case 1: return x * 5; case 2: "
           "return x - 9; case 3: return table[x & 31]; case 4: return x << 3; default: return -x; } }\n"
           "unsigned mix(unsigned a, unsigned b) { return (a * 2654435761u) ^ (b >> 7) ^ (a / (b | 1)); }\n"},
    {"i1", "long sum(const long *a, int n) { long s = 0; for (int i = 0; i < n; ++i) s += a[i] * (i | 1); return "
           "s; }\nint clampi(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }\n"}};

// llvm-ir2vec-22 embeddings --mode=mir's function vector of a one-function
// MIR file, as its two decimals.
std::string llvmMachineEmbedding(const std::string &mir, const std::string &vocab) {
  CommandResult r = run("llvm-ir2vec-22 embeddings --mode=mir --mir2vec-vocab-path=" + quote(vocab) + " " + quote(mir));
  EXPECT_EQ(r.ExitCode, 0) << mir << ": " << r.Err;
  size_t at = r.Out.find("Function vector:");
  if (at == std::string::npos)
    return "no function vector in: " + r.Out + r.Err;
  std::istringstream values(r.Out.substr(at + 16, r.Out.find(']', at) - at - 16));
  std::string token, joined;
  while (values >> token)
    if (token != "[")
      joined += (joined.empty() ? "" : " ") + token;
  return joined;
}

class IR2VecTrainMachine : public InlinerCorpusSuite {
protected:
  void SetUp() override {
    Corpus = makeEmbeddedBitcodeCorpus(Work.path(), IntegerSources, "-O2", ObjectListing::Directory, "int-");
    mustRun(quote(tool("mlgo-ir2vec")) + " triplets --mode=mir --opt_levels=O2 --corpus=" + quote(Corpus) +
            " --output_dir=" + quote(Work / "mir"));
  }
  CommandResult train(const std::string &dir, const std::string &out) {
    return run(quote(tool("mlgo-ir2vec")) + " train --input_dir=" + quote(dir) + " --output=" + quote(out) +
               " --report=" + quote(out + ".report.json") + " --dim=8 --epochs=100 --seed=3 --num_workers=2");
  }
  // Every machine function of the corpus: ours (embed --mode=mir) against
  // llvm-ir2vec-22 on llc-22's MIR of it, one function per file; returns
  // our embeddings by function.
  std::map<std::string, std::string> expectEmbedEqualsLlvmIr2vec(const std::string &vocab, const std::string &tag) {
    std::string table = Work / (tag + ".jsonl");
    mustRun(quote(tool("mlgo-ir2vec")) + " embed --mode=mir --corpus=" + quote(Corpus) + " --vocab=" + quote(vocab) +
            " --output=" + quote(table));
    std::map<std::string, std::string> ours;
    std::istringstream lines(readFile(table));
    for (std::string line; std::getline(lines, line);) {
      auto record = nlohmann::json::parse(line);
      if (!record["function"].is_null())
        ours[record["function"].get<std::string>()] = twoDecimals(record["embedding"]);
    }
    size_t compared = 0;
    for (const auto &[module, source] : IntegerSources) {
      std::string dir = Work / (tag + "-" + module);
      mustRun("mkdir -p " + quote(dir));
      for (const MachineFunctionFile &file : machineFunctionFiles(Corpus + "/" + module + ".o.bc", dir)) {
        EXPECT_EQ(ours[file.Function], llvmMachineEmbedding(file.Path, vocab)) << module << " " << file.Function;
        ++compared;
      }
    }
    EXPECT_EQ(compared, 4u);
    EXPECT_EQ(ours.size(), 4u);
    return ours;
  }
  TempDir Work;
  std::string Corpus;
};

} // namespace

TEST_F(IR2VecTrainMachine, MachineIrTripletsTrainAMir2VecVocabularyThatOursAndLlvmIr2vecUse) {
  std::string vocab = Work / "mir.json";
  CommandResult r = train(Work / "mir", vocab);
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(nlohmann::json::parse(readFile(vocab + ".report.json"))["mode"], "mir");
  // Every entity in MIR2Vec's section, keyed as it reads it (register
  // classes without their PhyReg_/VirtReg_ prefix): the sections and keys
  // of the tests' independent seeded vocabulary of the same entities.
  auto json = nlohmann::ordered_json::parse(readFile(vocab));
  std::string oracle = Work / "oracle.json", mirDir = Work / "oracle-mir";
  mustRun("mkdir -p " + quote(mirDir));
  auto files = machineFunctionFiles(Corpus + "/i0.o.bc", mirDir);
  ASSERT_FALSE(files.empty());
  mustRun(python("make_mir2vec_vocab.py") + "llvm-ir2vec-22 " + quote(files[0].Path) + " " + quote(oracle) + " 8 1");
  auto expected = nlohmann::ordered_json::parse(readFile(oracle));
  auto keys = [](const nlohmann::ordered_json &j) {
    std::map<std::string, std::set<std::string>> out;
    for (const auto &[section, entries] : j.items())
      for (const auto &[key, row] : entries.items())
        out[section].insert(key);
    return out;
  };
  EXPECT_EQ(keys(json), keys(expected));
  std::vector<std::string> sections;
  size_t entries = 0;
  for (const auto &[name, section] : json.items()) {
    sections.push_back(name);
    entries += section.size();
    for (const auto &[key, row] : section.items())
      ASSERT_EQ(row.size(), 8u) << name << " " << key;
  }
  EXPECT_EQ(sections, (std::vector<std::string>{"Opcodes", "CommonOperands", "PhysicalRegisters", "VirtualRegisters"}));
  EXPECT_EQ(std::to_string(entries) + "\n",
            readFile(Work / "mir/entity2id.txt").substr(0, std::to_string(entries).size() + 1));
  EXPECT_TRUE(json["VirtualRegisters"].contains("GR32") && json["PhysicalRegisters"].contains("GR32"));

  auto full = expectEmbedEqualsLlvmIr2vec(vocab, "full");
  EXPECT_NE(full["mix"], twoDecimals(std::vector<double>(8, 0.0)));

  // A vocabulary missing entities the functions use: MIR2Vec gives them a
  // zero vector (LLVM 22 warns of an error to come, but accepts the file);
  // ours does the same.
  json["CommonOperands"].erase("Immediate");
  json["VirtualRegisters"].erase("GR32");
  std::string missing = Work / "missing.json";
  writeFile(missing, json.dump());
  auto partial = expectEmbedEqualsLlvmIr2vec(missing, "missing");
  EXPECT_NE(partial["mix"], full["mix"]) << "mix uses immediates and GR32 virtual registers";
}

TEST_F(IR2VecTrainMachine, TripletsOfNoKnownLayoutAreAnErrorNamingTheFile) {
  auto broken = [&](const std::string &name, const std::string &entities, const std::string &relations) {
    std::string dir = Work / name;
    writeFile(dir + "/entity2id.txt", entities);
    writeFile(dir + "/relation2id.txt", relations);
    writeFile(dir + "/train2id.txt", "1\n0 1 1\n");
    CommandResult r = train(dir, Work / (name + ".json"));
    EXPECT_EQ(r.ExitCode, 1) << r.Err;
    EXPECT_FALSE(exists(Work / (name + ".json"))) << name;
    return r.Err;
  };
  const std::string mirEntities = "5\nADD\t0\nImmediate\t1\nMBB\t2\nPhyReg_GR32\t3\nVirtReg_GR32\t4\n";
  const std::string mirRelations = "2\nNext\t0\nArg0\t1\n";
  // The files as they are train (the control), then broken one way at a time.
  std::string dir = Work / "ok";
  writeFile(dir + "/entity2id.txt", mirEntities);
  writeFile(dir + "/relation2id.txt", mirRelations);
  writeFile(dir + "/train2id.txt", "2\n0 1 1\n0 4 1\n");
  ASSERT_EQ(train(dir, Work / "ok.json").ExitCode, 0);
  EXPECT_EQ(nlohmann::json::parse(readFile(Work / "ok.json"))["PhysicalRegisters"].size(), 1u);

  std::string err = broken("llvm-relations", mirEntities, "3\nType\t0\nNext\t1\nArg0\t2\n");
  EXPECT_NE(err.find(Work / "llvm-relations/relation2id.txt: relation 0 is 'Type'"), std::string::npos) << err;
  err = broken("mir-relations", "2\nRet\t0\nIntegerTy\t1\n", mirRelations);
  EXPECT_NE(err.find(Work / "mir-relations/relation2id.txt: relation 0 is 'Next'"), std::string::npos) << err;
  err = broken("no-operands", "3\nADD\t0\nPhyReg_GR32\t1\nVirtReg_GR32\t2\n", mirRelations);
  EXPECT_NE(err.find(Work / "no-operands/entity2id.txt: line 3: 'PhyReg_GR32': no common operand"), std::string::npos)
      << err;
  err = broken("stray", "5\nADD\t0\nImmediate\t1\nPhyReg_GR32\t2\nGR64\t3\nVirtReg_GR32\t4\n", mirRelations);
  EXPECT_NE(err.find(Work / "stray/entity2id.txt: line 5: 'GR64': neither"), std::string::npos) << err;
  err = broken("no-virtual", "3\nADD\t0\nImmediate\t1\nPhyReg_GR32\t2\n", mirRelations);
  EXPECT_NE(err.find(Work / "no-virtual/entity2id.txt: no VirtReg_ entity"), std::string::npos) << err;
  err =
      broken("unknown-operand", "5\nADD\t0\nImmediate\t1\nWidget\t2\nPhyReg_GR32\t3\nVirtReg_GR32\t4\n", mirRelations);
  EXPECT_NE(err.find(Work / "unknown-operand/entity2id.txt: line 4: 'Widget': not an operand kind"), std::string::npos)
      << err;
  // A name that cannot be a JSON key (found by fuzz/openke: the trained
  // vectors' write threw, and train aborted after all its epochs).
  err = broken("not-utf8", "3\nAdd\t0\nInteger\xecTy\t1\nRet\t2\n", "2\nType\t0\nNext\t1\n");
  EXPECT_NE(err.find(Work / "not-utf8/entity2id.txt: line 3: the entity name is not UTF-8"), std::string::npos) << err;
  // IR2Vec entities without a type: opt-22 refuses an empty Types section
  // (found by fuzz/openke: train wrote it and harvest-logs refused it).
  err = broken("no-types", "3\nAdd\t0\nRet\t1\nVariable\t2\n", "2\nType\t0\nNext\t1\n");
  EXPECT_NE(err.find(Work / "no-types/entity2id.txt: no entity is a type"), std::string::npos) << err;
  // Without a predicate the section is left out, as IR2Vec allows, and both
  // opt-22 and harvest-logs' check take the file.
  dir = Work / "no-predicates";
  writeFile(dir + "/entity2id.txt", "4\nAdd\t0\nRet\t1\nIntegerTy\t2\nVariable\t3\n");
  writeFile(dir + "/relation2id.txt", "2\nType\t0\nNext\t1\n");
  writeFile(dir + "/train2id.txt", "2\n0 2 0\n0 1 1\n");
  ASSERT_EQ(train(dir, Work / "no-predicates.json").ExitCode, 0);
  nlohmann::json vocab = nlohmann::json::parse(readFile(Work / "no-predicates.json"));
  EXPECT_FALSE(vocab.contains("Predicates")) << vocab.dump();
  writeFile(Work / "add.ll", "define i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n");
  // opt-22 reports a vocabulary it refuses on stderr and still exits 0.
  CommandResult opt =
      run("opt-22 -passes='print<ir2vec>' -disable-output -ir2vec-vocab-path=" + quote(Work / "no-predicates.json") +
          " " + quote(Work / "add.ll") + " 2>&1");
  EXPECT_EQ(opt.ExitCode, 0) << opt.Out;
  EXPECT_NE(opt.Out.find("Function vector"), std::string::npos) << opt.Out;
  EXPECT_EQ(opt.Out.find("error"), std::string::npos) << opt.Out;
  // harvest-logs checks the vocabulary before any compile (exit 1 if refused).
  mustRun(harvestCommand(Corpus, Work / "h", "--ir2vec_vocab=" + quote(Work / "no-predicates.json")));
}
