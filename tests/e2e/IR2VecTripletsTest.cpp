// mlgo-ir2vec triplets: per module, the triplets equal opt-22 -O<level> piped
// into llvm-ir2vec-22 triplets (at the level the seed drew for it), the
// entities equal llvm-ir2vec-22 entities, the corpus' set is deduplicated
// the same with a memory budget of a few triplets (spilled runs merged), and
// the choice of levels is a function of the seed alone. With --mode=mir, per
// module and level, the triplets equal llvm-ir2vec-22 triplets --mode=mir on
// llc-22 -stop-before=greedy's MIR of it, one machine function at a time, and
// the entities equal llvm-ir2vec-22 entities --mode=mir.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/MachineIr.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <sstream>

using namespace mlgo;
using namespace mlgo::test;

namespace {

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    out.push_back(line);
  return out;
}

class IR2VecTriplets : public SmallInlinerCorpusSuite {
protected:
  CommandResult triplets(const std::string &corpus, const std::string &out, const std::string &flags) {
    return run(quote(tool("mlgo-ir2vec")) + " triplets --corpus=" + quote(corpus) + " --output_dir=" + quote(out) +
               " --report=" + quote(out + ".report.json") + " " + flags);
  }
  // Checks OUT against llvm-ir2vec-22 module by module; returns the report.
  nlohmann::json expectEqualsLlvmIr2vec(const std::string &corpus, const std::string &out) {
    nlohmann::json report = nlohmann::json::parse(readFile(out + ".report.json"));
    std::set<std::string> expected;
    unsigned maxRelation = 1;
    for (const nlohmann::json &m : report["modules"]) {
      std::string name = m["module"], level = m["opt_level"];
      EXPECT_TRUE(m["error"].is_null()) << name;
      std::string optimized = Work / (name + "." + level + ".bc");
      mustRun("opt-22 -" + level + " " + quote(corpus + "/" + name + ".bc") + " -o " + quote(optimized));
      CommandResult theirs = run("llvm-ir2vec-22 triplets " + quote(optimized));
      EXPECT_EQ(theirs.ExitCode, 0) << theirs.Err;
      auto rows = lines(theirs.Out);
      EXPECT_FALSE(rows.empty());
      if (rows.empty())
        continue;
      maxRelation = std::max(maxRelation, static_cast<unsigned>(std::stoul(rows[0].substr(rows[0].find('=') + 1))));
      EXPECT_EQ(m["triplets"].get<size_t>(), rows.size() - 1) << name << " at -" << level;
      for (size_t i = 1; i < rows.size(); ++i) {
        std::string row = rows[i];
        for (char &c : row)
          if (c == '\t')
            c = ' ';
        expected.insert(row);
      }
    }
    auto train = lines(readFile(out + "/train2id.txt"));
    EXPECT_FALSE(train.empty());
    if (train.empty())
      return report;
    EXPECT_EQ(std::stoul(train[0]), train.size() - 1);
    std::set<std::string> ours(train.begin() + 1, train.end());
    EXPECT_EQ(ours.size(), train.size() - 1) << "train2id.txt holds a triplet twice";
    EXPECT_EQ(ours, expected);
    EXPECT_EQ(report["max_relation"].get<unsigned>(), maxRelation);
    auto relations = lines(readFile(out + "/relation2id.txt"));
    EXPECT_EQ(relations.size(), maxRelation + 2);
    EXPECT_EQ(relations[0], std::to_string(maxRelation + 1));
    EXPECT_EQ(readFile(out + "/entity2id.txt"), run("llvm-ir2vec-22 entities").Out);
    return report;
  }
  TempDir Work;
};

} // namespace

TEST_F(IR2VecTriplets, EachModuleAtItsSeededLevelEqualsOptPipedIntoLlvmIr2vec) {
  std::string out = Work / "c";
  CommandResult r = triplets(corpus(), out, "--seed=7 --num_workers=2");
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  nlohmann::json report = expectEqualsLlvmIr2vec(corpus(), out);
  EXPECT_GT(report["distinct"].get<size_t>(), 50u);

  std::vector<std::pair<std::string, std::string>> sources;
  for (int i = 0; i < 2; ++i)
    sources.emplace_back(
        "cxx" + std::to_string(i),
        "#include <cstddef>\ntemplate <typename T> struct Box { T v; T get() const { return v; } };\n"
        "struct Shape { virtual ~Shape(); virtual double area(double s) const = 0; };\n"
        "double sum" +
            std::to_string(i) +
            "(const Shape **s, std::size_t n, double k) { double t = 0; for (std::size_t j = 0; j < n; "
            "++j) t += s[j]->area(k) * Box<double>{k}.get(); return t; }\n");
  std::string cxx = makeEmbeddedBitcodeCorpus(Work.path(), sources, "-x c++ -O1", ObjectListing::Directory, "cxx-");
  r = triplets(cxx, Work / "cxx", "--seed=3 --opt_levels=O1,O3");
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  expectEqualsLlvmIr2vec(cxx, Work / "cxx");
}

// Locals, a loop and a call that -O2 rewrites (mem2reg, inlining, unrolling):
// without optnone, its triplets at -O2 are not those at -O0.
const char *OptimizableSource = R"C(
static int sq(int x) { return x * x; }
int walk(const int *a, int n) { int s = 0; for (int i = 0; i < n; ++i) { int t = a[i]; if (t > 3) s += sq(t); else s -= t; } return s; }
int pick(int x) { int r; switch (x & 3) { case 0: r = 1; break; case 1: r = x; break; default: r = -x; } return r + sq(r); }
)C";

TEST_F(IR2VecTriplets, AnO0CorpusAtO2EqualsOptWhichSkipsOptnoneFunctions) {
  // clang-22 -O0 marks every function optnone, whose function passes opt-22
  // -O2 skips: the in-process pipeline must too.
  std::vector<std::pair<std::string, std::string>> sources = {{"n0", OptimizableSource}, {"n1", inlinerSource(4, 3)}};
  std::string optnone = makeEmbeddedBitcodeCorpus(Work.path(), sources, "-O0", ObjectListing::Directory, "optnone-");
  ASSERT_NE(run("llvm-dis-22 -o - " + quote(optnone + "/n0.o.bc")).Out.find("optnone"), std::string::npos)
      << "clang-22 -O0 should mark the functions optnone";
  ASSERT_EQ(triplets(optnone, Work / "o2", "--opt_levels=O2").ExitCode, 0);
  expectEqualsLlvmIr2vec(optnone, Work / "o2");
  // The control: without optnone, -O2 gives other triplets (module passes
  // such as IPSCCP still run on optnone functions, so -O2 is not -O0 there).
  std::string plain = makeEmbeddedBitcodeCorpus(Work.path(), sources, "-O0 -Xclang -disable-O0-optnone",
                                                ObjectListing::Directory, "plain-");
  ASSERT_EQ(triplets(plain, Work / "plain", "--opt_levels=O2").ExitCode, 0);
  expectEqualsLlvmIr2vec(plain, Work / "plain");
  EXPECT_NE(readFile(Work / "plain/train2id.txt"), readFile(Work / "o2/train2id.txt"));
}

TEST_F(IR2VecTriplets, ATinyMemoryBudgetSpillsAndGivesTheSameFiles) {
  std::string roomy = Work / "roomy", tiny = Work / "tiny";
  ASSERT_EQ(triplets(corpus(), roomy, "--seed=1").ExitCode, 0);
  CommandResult r =
      run("MLGO_IR2VEC_TRIPLET_BUDGET=5 " + quote(tool("mlgo-ir2vec")) + " triplets --corpus=" + quote(corpus()) +
          " --output_dir=" + quote(tiny) + " --report=" + quote(tiny + ".report.json") + " --seed=1");
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  for (const char *file : {"train2id.txt", "entity2id.txt", "relation2id.txt"})
    EXPECT_EQ(readFile(tiny + "/" + file), readFile(roomy + "/" + file)) << file;
  EXPECT_GT(nlohmann::json::parse(readFile(tiny + ".report.json"))["spilled_runs"].get<size_t>(), 10u);
  EXPECT_EQ(nlohmann::json::parse(readFile(roomy + ".report.json"))["spilled_runs"], 0);
  EXPECT_EQ(listTree(tiny), (std::set<std::string>{"entity2id.txt", "relation2id.txt", "train2id.txt"}))
      << "the spilled runs are removed";
}

TEST_F(IR2VecTriplets, TheLevelsAreTheSeedsAloneAndOneLevelMeansEveryModule) {
  auto levels = [&](const std::string &out) {
    std::vector<std::string> chosen;
    nlohmann::json report = nlohmann::json::parse(readFile(out + ".report.json"));
    for (const nlohmann::json &m : report["modules"])
      chosen.push_back(m["opt_level"]);
    return chosen;
  };
  ASSERT_EQ(triplets(corpus(), Work / "a", "--seed=11 --num_workers=1").ExitCode, 0);
  ASSERT_EQ(triplets(corpus(), Work / "b", "--seed=11 --num_workers=2").ExitCode, 0);
  EXPECT_EQ(levels(Work / "a").size(), 4u);
  EXPECT_EQ(levels(Work / "a"), levels(Work / "b"));
  EXPECT_EQ(readFile(Work / "a/train2id.txt"), readFile(Work / "b/train2id.txt"));
  std::set<std::string> seen;
  for (int seed = 0; seed < 8; ++seed) {
    ASSERT_EQ(triplets(corpus(), Work / ("s" + std::to_string(seed)), "--seed=" + std::to_string(seed)).ExitCode, 0);
    for (const std::string &level : levels(Work / ("s" + std::to_string(seed))))
      seen.insert(level);
  }
  EXPECT_EQ(seen, (std::set<std::string>{"O0", "O1", "O2", "O3"})) << "the seeds should draw every level";
  ASSERT_EQ(triplets(corpus(), Work / "one", "--opt_levels=O2").ExitCode, 0);
  EXPECT_EQ(levels(Work / "one"), std::vector<std::string>(4, "O2"));
  CommandResult bad = triplets(corpus(), Work / "bad", "--opt_levels=O2,O9");
  EXPECT_EQ(bad.ExitCode, 1);
  EXPECT_NE(bad.Err.find("'O9' is not one of"), std::string::npos) << bad.Err;
}

TEST_F(IR2VecTriplets, MachineIrTripletsEqualLlvmIr2vecPerMachineFunctionOnCAndCxx) {
  // Leaf integer functions, which llvm-ir2vec-22 --mode=mir can read whole;
  // the C++ corpus adds calls and SSE arithmetic, where it crashes.
  std::vector<std::pair<std::string, std::string>> cSources = {
      {"t0", "int table[32];\nint pick(int x) { switch (x & 7) { case 0: return 3; case 1: return x * 5; case 2: "
             "return x - 9; case 3: return table[x & 31]; case 4: return x << 3; default: return -x; } }\n"
             "unsigned mix(unsigned a, unsigned b) { return (a * 2654435761u) ^ (b >> 7) ^ (a / (b | 1)); }\n"},
      {"t1", "long sum(const long *a, int n) { long s = 0; for (int i = 0; i < n; ++i) s += a[i] * (i | 1); return "
             "s; }\nint small(int x) { return x + 1; }\n"
             "int clampi(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }\n"}};
  std::vector<std::pair<std::string, std::string>> cxxSources;
  for (int i = 0; i < 2; ++i)
    cxxSources.emplace_back("tcxx" + std::to_string(i),
                            "struct Shape { virtual ~Shape(); virtual double area(double s) const = 0; };\n"
                            "template <typename T> struct Box { T v; T twice() const { return v + v; } };\n"
                            "int boxes" +
                                std::to_string(i) + "(int x) { return Box<int>{x}.twice() * " + std::to_string(i + 3) +
                                "; }\n"
                                "double areas" +
                                std::to_string(i) +
                                "(const Shape **s, int n, double k) { double t = 0; for (int j = 0; j < n; ++j) t "
                                "+= s[j]->area(k); return t; }\n");
  struct Run {
    std::string Corpus, Flags;
    bool AllReadable;
  };
  std::vector<Run> runs = {
      {makeEmbeddedBitcodeCorpus(Work.path(), cSources, "-O0", ObjectListing::Directory, "t-"),
       "--seed=5 --num_workers=2", true},
      {makeEmbeddedBitcodeCorpus(Work.path(), cxxSources, "-x c++ -O1", ObjectListing::Directory, "tcxx-"),
       "--seed=2 --opt_levels=O1,O3", false}};
  for (size_t k = 0; k < runs.size(); ++k) {
    const Run &run_ = runs[k];
    std::string out = Work / ("mir" + std::to_string(k));
    CommandResult r = triplets(run_.Corpus, out, "--mode=mir " + run_.Flags);
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    nlohmann::json report = nlohmann::json::parse(readFile(out + ".report.json"));
    EXPECT_EQ(report["mode"], "mir");
    std::set<std::string> expected;
    unsigned maxRelation = 0;
    size_t compared = 0, unreadable = 0;
    std::string someMir;
    for (const nlohmann::json &m : report["modules"]) {
      std::string name = m["module"], level = m["opt_level"];
      EXPECT_TRUE(m["error"].is_null()) << name;
      std::string dir = Work / ("mir-" + name + "-" + level), optimized = dir + "/module.bc";
      mustRun("mkdir -p " + quote(dir) + " && opt-22 -" + level + " " + quote(run_.Corpus + "/" + name + ".bc") +
              " -o " + quote(optimized));
      size_t rowsOfModule = 0;
      bool whole = true;
      for (const MachineFunctionFile &file : machineFunctionFiles(optimized, dir)) {
        someMir = file.Path;
        CommandResult theirs = run("llvm-ir2vec-22 triplets --mode=mir " + quote(file.Path));
        if (theirs.ExitCode != 0) {
          EXPECT_TRUE(hasClasslessRegister(readFile(file.Path))) << name << " " << file.Function << theirs.Err;
          whole = false;
          ++unreadable;
          continue;
        }
        ++compared;
        auto rows = lines(theirs.Out);
        ASSERT_FALSE(rows.empty());
        ASSERT_EQ(rows[0].rfind("MAX_RELATION=", 0), 0u) << rows[0];
        maxRelation = std::max(maxRelation, static_cast<unsigned>(std::stoul(rows[0].substr(13))));
        rowsOfModule += rows.size() - 1;
        for (size_t i = 1; i < rows.size(); ++i) {
          std::string row = rows[i];
          for (char &c : row)
            if (c == '\t')
              c = ' ';
          expected.insert(row);
        }
      }
      if (whole)
        EXPECT_EQ(m["triplets"].get<size_t>(), rowsOfModule) << name << " at -" << level;
    }
    EXPECT_EQ(unreadable == 0, run_.AllReadable) << unreadable << " functions llvm-ir2vec-22 cannot read";
    EXPECT_GE(compared, 2u);
    auto train = lines(readFile(out + "/train2id.txt"));
    ASSERT_FALSE(train.empty());
    EXPECT_EQ(std::stoul(train[0]), train.size() - 1);
    std::set<std::string> ours(train.begin() + 1, train.end());
    EXPECT_EQ(ours.size(), train.size() - 1) << "train2id.txt holds a triplet twice";
    if (run_.AllReadable) {
      EXPECT_EQ(ours, expected);
      EXPECT_EQ(report["max_relation"].get<unsigned>(), maxRelation);
    } else {
      EXPECT_TRUE(std::includes(ours.begin(), ours.end(), expected.begin(), expected.end()));
      EXPECT_GT(ours.size(), expected.size()) << "the functions llvm-ir2vec-22 cannot read add triplets";
      EXPECT_GE(report["max_relation"].get<unsigned>(), maxRelation);
    }
    auto relations = lines(readFile(out + "/relation2id.txt"));
    unsigned ourMax = report["max_relation"];
    ASSERT_EQ(relations.size(), ourMax + 2);
    EXPECT_EQ(relations[0], std::to_string(ourMax + 1));
    EXPECT_EQ(relations[1], "Next\t0");
    EXPECT_EQ(relations[2], "Arg0\t1");
    EXPECT_EQ(readFile(out + "/entity2id.txt"), run("llvm-ir2vec-22 entities --mode=mir " + quote(someMir)).Out);
  }
}
