// Landlock write confinement of the processes harvest-logs starts (issue 20
// #1b): a confined child writes only beneath its directory, at every ABI we
// degrade to; without Landlock (simulated) it runs, unconfined, and the
// harvest summary says so.
#include "mlgo/harvest/Harvester.h"
#include "mlgo/support/ChildProcess.h"
#include "mlgo/support/Landlock.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace mlgo;
namespace fs = std::filesystem;

namespace {

// Runs `script` with /bin/sh confined to `inside`; its exit status.
ExitStatus runConfined(const std::string &script, const std::string &inside) {
  SpawnOptions options{{"/bin/sh", "-c", script}, "/dev/null", "/dev/null"};
  options.ConfineWritesTo = inside;
  auto child = ChildProcess::spawn(options);
  EXPECT_TRUE(static_cast<bool>(child)) << llvm::toString(child.takeError());
  return child ? child->wait() : ExitStatus{};
}

struct RestoreProbe {
  ~RestoreProbe() { setLandlockAbiForTesting(-1); }
};

TEST(Confinement, WriteRightsGrowWithTheAbi) {
  EXPECT_EQ(landlockWriteRights(0), 0u);
  uint64_t v1 = landlockWriteRights(1), v2 = landlockWriteRights(2), v3 = landlockWriteRights(3);
  EXPECT_EQ(v1 & v2, v1);
  EXPECT_EQ(v2 & v3, v2);
  EXPECT_NE(v1, v2);                     // REFER
  EXPECT_NE(v2, v3);                     // TRUNCATE
  EXPECT_EQ(landlockWriteRights(7), v3); // later ABIs add no file-system write right
}

class ConfinedChild : public ::testing::TestWithParam<int> {};

TEST_P(ConfinedChild, WritesOnlyBeneathItsDirectory) {
  int abi = GetParam();
  if (landlockSupport().Abi < std::max(abi, 1))
    GTEST_SKIP() << "the kernel offers Landlock ABI " << landlockSupport().Abi;
  RestoreProbe restore;
  if (abi > 0)
    setLandlockAbiForTesting(abi); // build the ruleset as an older kernel would
  test::TempDir dir;
  std::string inside = dir / "work", outside = dir / "victim";
  fs::create_directories(inside);
  test::writeFile(outside, "precious\n");
  ExitStatus status =
      runConfined("echo $TMPDIR > " + inside + "/tmpdir; mkdir " + inside + "/sub && echo ok > " + inside +
                      "/sub/f; echo pwned > " + outside + "; echo new > " + dir / "created" + "; true",
                  inside);
  EXPECT_TRUE(status.ok()) << status.describe();
  EXPECT_EQ(test::readFile(outside), "precious\n");
  EXPECT_FALSE(fs::exists(dir / "created"));
  EXPECT_EQ(test::readFile(inside + "/sub/f"), "ok\n");
  EXPECT_EQ(test::readFile(inside + "/tmpdir"), inside + "\n");
  // The vfork child's restriction is its own, not ours.
  test::writeFile(dir / "after", "still free\n");
  EXPECT_EQ(test::readFile(dir / "after"), "still free\n");
}

INSTANTIATE_TEST_SUITE_P(Abi, ConfinedChild, ::testing::Values(0, 1, 2, 3));

TEST(Confinement, WithoutLandlockTheChildRunsUnconfinedAndTheSummarySaysSo) {
  RestoreProbe restore;
  setLandlockAbiForTesting(0, "simulated: no Landlock");
  test::TempDir dir;
  std::string inside = dir / "work", outside = dir / "outside";
  fs::create_directories(inside);
  EXPECT_TRUE(runConfined("echo x > " + outside, inside).ok());
  EXPECT_TRUE(fs::exists(outside)); // not confined: the spawn neither failed nor confined
  HarvestSummary summary;
  summary.Confinement = landlockSupport();
  nlohmann::ordered_json j = summary.toJson(HarvestOptions{});
  EXPECT_EQ(j["confinement"]["active"], false);
  EXPECT_EQ(j["confinement"]["landlock_abi"], 0);
  EXPECT_NE(j["confinement"]["warning"].get<std::string>().find("simulated: no Landlock"), std::string::npos);
}

} // namespace
