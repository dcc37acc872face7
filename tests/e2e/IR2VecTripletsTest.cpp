// mlgo-ir2vec triplets: per module, the triplets equal opt-22 -O<level> piped
// into llvm-ir2vec-22 triplets (at the level the seed drew for it), the
// entities equal llvm-ir2vec-22 entities, the corpus' set is deduplicated
// the same with a memory budget of a few triplets (spilled runs merged), and
// the choice of levels is a function of the seed alone.
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

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

class IR2VecTriplets : public InlinerCorpusSuite {
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
