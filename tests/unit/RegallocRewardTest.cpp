#include "mlgo/evaluate/RegallocReward.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

using namespace mlgo;
using namespace mlgo::test;

namespace {

std::string errorText(llvm::Error error) { return llvm::toString(std::move(error)); }

// Two functions' SpillReloadCopies remarks as llc writes them (one name
// quoted, as the YAML serializer quotes names that need it), one remark of
// another kind that must not count, and a loop-level remark.
const char *const RemarksYaml = R"(--- !Missed
Pass:            regalloc
Name:            SpillReloadCopies
Function:        spills
Args:
  - NumSpills:       '2'
  - String:          ' spills '
  - TotalSpillsCost: '1.500000e+00'
  - String:          ' total spills cost '
  - NumReloads:      '3'
  - String:          ' reloads '
  - TotalReloadsCost: '2.500000e+00'
  - String:          ' total reloads cost '
  - TotalFoldedSpillsCost: '1.000000e+00'
  - TotalFoldedReloadsCost: '5.000000e-01'
  - NumVRCopies:     '4'
  - TotalCopiesCost: '1.000000e+01'
...
--- !Missed
Pass:            regalloc
Name:            LoopSpillReloadCopies
Function:        spills
Args:
  - TotalSpillsCost: '1.000000e+03'
...
--- !Missed
Pass:            regalloc
Name:            SpillReloadCopies
Function:        '_ZN1a1bEv'
Args:
  - TotalCopiesCost: '5.000000e+00'
...
)";

TEST(RegallocReward, ScoresUseRegAllocScoreWeightsPerFunction) {
  TempDir dir;
  writeFile(dir / "remarks.yaml", RemarksYaml);
  auto scores = regallocScores(dir / "remarks.yaml");
  ASSERT_TRUE(static_cast<bool>(scores)) << errorText(scores.takeError());
  ASSERT_EQ(scores->size(), 2u);
  // 1*1.5 + 4*2.5 + 1*1.0 + 4*0.5 + 0.2*10
  EXPECT_DOUBLE_EQ(scores->at("spills"), 16.5);
  EXPECT_DOUBLE_EQ(scores->at("_ZN1a1bEv"), 1.0);
}

TEST(RegallocReward, AMissingRemarksFileIsAnErrorNamingIt) {
  TempDir dir;
  auto scores = regallocScores(dir / "never-written.yaml");
  ASSERT_FALSE(static_cast<bool>(scores));
  std::string message = errorText(scores.takeError());
  EXPECT_NE(message.find("never-written.yaml"), std::string::npos) << message;
}

TEST(RegallocReward, MalformedRemarksAreAnErrorNamingTheFile) {
  TempDir dir;
  writeFile(dir / "bad.yaml", "--- !Missed\nPass: regalloc\nName: [unclosed\n");
  auto scores = regallocScores(dir / "bad.yaml");
  ASSERT_FALSE(static_cast<bool>(scores));
  EXPECT_NE(errorText(scores.takeError()).find("bad.yaml"), std::string::npos);

  writeFile(dir / "nan.yaml", "--- !Missed\nPass: regalloc\nName: SpillReloadCopies\nFunction: f\nArgs:\n"
                              "  - TotalSpillsCost: 'lots'\n...\n");
  scores = regallocScores(dir / "nan.yaml");
  ASSERT_FALSE(static_cast<bool>(scores));
  EXPECT_NE(errorText(scores.takeError()).find("TotalSpillsCost"), std::string::npos);
}

// A NaN or infinite cost, or costs whose weighted sum overflows, would be a
// reward that is not a number in the training log (fuzz/regressions/regalloc_remarks).
TEST(RegallocReward, CostsThatAreNotFiniteNumbersAreAnErrorNamingTheFile) {
  TempDir dir;
  for (const char *cost : {"nan", "inf", "-inf"}) {
    writeFile(dir / "r.yaml", std::string("--- !Missed\nPass: regalloc\nName: SpillReloadCopies\nFunction: f\n"
                                          "Args:\n  - TotalSpillsCost: '") +
                                  cost + "'\n...\n");
    auto scores = regallocScores(dir / "r.yaml");
    ASSERT_FALSE(static_cast<bool>(scores)) << cost;
    std::string message = errorText(scores.takeError());
    EXPECT_NE(message.find("r.yaml"), std::string::npos) << message;
    EXPECT_NE(message.find("TotalSpillsCost"), std::string::npos) << message;
  }
  writeFile(dir / "big.yaml", "--- !Missed\nPass: regalloc\nName: SpillReloadCopies\nFunction: f\n"
                              "Args:\n  - TotalReloadsCost: '1e308'\n...\n");
  auto scores = regallocScores(dir / "big.yaml");
  ASSERT_FALSE(static_cast<bool>(scores));
  EXPECT_NE(errorText(scores.takeError()).find("big.yaml"), std::string::npos);
}

// The real llc-22's remarks: a function under heavy register pressure spills
// and scores above zero, a trivial one has no remark and scores nothing.
TEST(RegallocReward, RealLlcRemarksScoreTheSpillingFunction) {
  TempDir dir;
  std::string body = "volatile int sink;\nvoid calm(void) { sink = 1; }\nvoid pressure(int *p) {\n";
  for (int i = 0; i < 40; ++i)
    body += "  int v" + std::to_string(i) + " = p[" + std::to_string(i) + "] * sink;\n";
  body += "  sink = 0;\n";
  for (int i = 0; i < 40; ++i)
    body += "  p[" + std::to_string(i) + "] += v" + std::to_string(i) + " * v" + std::to_string(39 - i) + ";\n";
  body += "}\n";
  writeFile(dir / "p.c", body);
  mustRun(quote(MLGO_CLANG) + " -O2 -S -emit-llvm -o " + quote(dir / "p.ll") + " " + quote(dir / "p.c"));
  mustRun(std::string("llc-22 -O2 -pass-remarks-output=") + quote(dir / "r.yaml") +
          " -pass-remarks-filter=regalloc -o " + quote(dir / "p.s") + " " + quote(dir / "p.ll"));
  auto scores = regallocScores(dir / "r.yaml");
  ASSERT_TRUE(static_cast<bool>(scores)) << errorText(scores.takeError());
  ASSERT_EQ(scores->count("pressure"), 1u) << readFile(dir / "r.yaml");
  EXPECT_GT(scores->at("pressure"), 0.0);
  EXPECT_EQ(scores->count("calm"), 0u);
}

} // namespace
