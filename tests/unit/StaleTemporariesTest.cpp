// StaleTemporaries: a run that holds its directory's lock removes the
// temporaries a killed run left of its own files, and nothing else: not a
// look-alike of another name, not a module's data, never through a link
// (issue #44, finding 6). Every test runs with openat2 and with the
// one-component-at-a-time walk older kernels get.
#include "mlgo/support/StaleTemporaries.h"

#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"

#include "support/TestSupport.h"

#include <sys/stat.h>
#include <unistd.h>

using namespace mlgo;
using namespace mlgo::test;

namespace {

TEST(TemporaryStem, AcceptsExactlyTheNamesTemporaryNameInMakes) {
  std::string made = temporaryNameIn("dir", "summary.json");
  ASSERT_EQ(made.rfind("dir/", 0), 0u) << made;
  EXPECT_EQ(temporaryStem(made.substr(4)), std::optional<llvm::StringRef>("summary.json")) << made;
  EXPECT_EQ(temporaryStem("extract_ir.report.json.tmp.4242.0"),
            std::optional<llvm::StringRef>("extract_ir.report.json"));
  EXPECT_EQ(temporaryStem("a.tmp.b.tmp.1.2"), std::optional<llvm::StringRef>("a.tmp.b"));
  for (const char *name :
       {"summary.json", "summary.json.tmp", "summary.json.tmp.1", "summary.json.tmp.1.", "summary.json.tmp..2",
        "summary.json.tmp.1.2x", "summary.json.tmp.-1.2", "summary.json.tmp.+1.2", "summary.json.tmp.1.2.3",
        "summary.json.tmpx.1.2", ".tmp.1.2", "summary.json.TMP.1.2", "summary.json.tmp.1.2 "})
    EXPECT_EQ(temporaryStem(name), std::nullopt) << name;
}

class StaleTemporaries : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override { setOpenat2Enabled(GetParam()); }
  void TearDown() override { setOpenat2Enabled(true); }

  std::string out() const { return Dir / "out"; }

  std::vector<std::string> removeOwn(const std::string &relative) {
    auto removed = removeStaleTemporaries(out(), relative, {"summary.json", "harvest.jsonl"});
    EXPECT_TRUE(static_cast<bool>(removed)) << llvm::toString(removed.takeError());
    return removed ? *removed : std::vector<std::string>();
  }

  TempDir Dir;
};

TEST_P(StaleTemporaries, RemovesOnlyTheTemporariesOfTheListedNames) {
  writeFile(out() + "/summary.json", "{}\n");
  writeFile(out() + "/summary.json.tmp.4242.0", "{\"half\":");
  writeFile(out() + "/harvest.jsonl.tmp.17.3", "");
  // Look-alikes that are not temporaries of the listed names stay.
  for (const char *kept : {"summary.json.tmp.4242", "summary.json.tmp.1.2.bak", "other.json.tmp.1.2", "m0.bc.tmp.1.2",
                           "logs/summary.json.tmp.1.2", "summary.jsonl.tmp.1.2"})
    writeFile(out() + "/" + kept, "keep\n");
  std::vector<std::string> removed = removeOwn("");
  EXPECT_EQ(std::set<std::string>(removed.begin(), removed.end()),
            (std::set<std::string>{out() + "/summary.json.tmp.4242.0", out() + "/harvest.jsonl.tmp.17.3"}));
  EXPECT_EQ(listTree(out()), (std::set<std::string>{"logs/", "logs/summary.json.tmp.1.2", "m0.bc.tmp.1.2",
                                                    "other.json.tmp.1.2", "summary.json", "summary.json.tmp.1.2.bak",
                                                    "summary.json.tmp.4242", "summary.jsonl.tmp.1.2"}));
  EXPECT_EQ(readFile(out() + "/summary.json"), "{}\n");
  // Nothing left: a second call removes nothing.
  EXPECT_TRUE(removeOwn("").empty());
}

TEST_P(StaleTemporaries, ALinkNamedLikeATemporaryIsRemovedItselfAndItsTargetSurvives) {
  writeFile(Dir / "outside/precious.json", "not ours\n");
  writeFile(Dir / "outside/dir/inside.txt", "not ours either\n");
  writeFile(out() + "/.mlgo-harvest/lock", "");
  ASSERT_EQ(::symlink((Dir / "outside/precious.json").c_str(), (out() + "/summary.json.tmp.1.2").c_str()), 0);
  ASSERT_EQ(::symlink((Dir / "outside/dir").c_str(), (out() + "/harvest.jsonl.tmp.3.4").c_str()), 0);
  std::vector<std::string> removed = removeOwn("");
  EXPECT_EQ(removed.size(), 2u);
  struct stat st;
  EXPECT_NE(::lstat((out() + "/summary.json.tmp.1.2").c_str(), &st), 0);
  EXPECT_NE(::lstat((out() + "/harvest.jsonl.tmp.3.4").c_str(), &st), 0);
  EXPECT_EQ(readFile(Dir / "outside/precious.json"), "not ours\n");
  EXPECT_EQ(readFile(Dir / "outside/dir/inside.txt"), "not ours either\n");
}

TEST_P(StaleTemporaries, ADirectoryNamedLikeATemporaryStays) {
  writeFile(out() + "/summary.json.tmp.1.2/data", "someone's\n");
  EXPECT_TRUE(removeOwn("").empty());
  EXPECT_EQ(readFile(out() + "/summary.json.tmp.1.2/data"), "someone's\n");
}

TEST_P(StaleTemporaries, CleansASubdirectoryButNeverThroughALink) {
  writeFile(out() + "/state/summary.json.tmp.9.9", "half");
  EXPECT_EQ(removeOwn("state"), std::vector<std::string>{out() + "/state/summary.json.tmp.9.9"});
  EXPECT_FALSE(exists(out() + "/state/summary.json.tmp.9.9"));

  // A link in place of the directory is named, and nothing it names is removed.
  writeFile(Dir / "elsewhere/summary.json.tmp.5.5", "not ours\n");
  ASSERT_EQ(::symlink((Dir / "elsewhere").c_str(), (out() + "/linked").c_str()), 0);
  auto refused = removeStaleTemporaries(out(), "linked", {"summary.json"});
  ASSERT_FALSE(static_cast<bool>(refused));
  std::string message = llvm::toString(refused.takeError());
  EXPECT_NE(message.find(out() + "/linked: a symbolic link below " + out()), std::string::npos) << message;
  EXPECT_EQ(readFile(Dir / "elsewhere/summary.json.tmp.5.5"), "not ours\n");
}

TEST_P(StaleTemporaries, AMissingDirectoryHoldsNone) {
  EXPECT_TRUE(removeOwn("explore").empty());
  auto removed = removeStaleTemporaries(Dir / "absent", "", {"summary.json"});
  ASSERT_TRUE(static_cast<bool>(removed)) << llvm::toString(removed.takeError());
  EXPECT_TRUE(removed->empty());
}

TEST_P(StaleTemporaries, AFamilyOfNamesByPredicate) {
  writeFile(out() + "/explore/round-1.jsonl.tmp.1.1", "");
  writeFile(out() + "/explore/round-12.jsonl.tmp.1.2", "");
  writeFile(out() + "/explore/round-13.jsonl.tmp.1.3", ""); // beyond the rounds asked for
  writeFile(out() + "/explore/round-x.jsonl.tmp.1.4", "");
  auto removed = removeStaleTemporaries(
      out(), "explore", [](llvm::StringRef stem) { return stem == "round-1.jsonl" || stem == "round-12.jsonl"; });
  ASSERT_TRUE(static_cast<bool>(removed)) << llvm::toString(removed.takeError());
  EXPECT_EQ(removed->size(), 2u);
  EXPECT_EQ(listTree(out() + "/explore"), (std::set<std::string>{"round-13.jsonl.tmp.1.3", "round-x.jsonl.tmp.1.4"}));
}

INSTANTIATE_TEST_SUITE_P(Resolution, StaleTemporaries, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? std::string("Openat2") : std::string("ComponentWalk");
                         });

} // namespace
