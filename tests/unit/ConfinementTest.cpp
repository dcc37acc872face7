// Landlock confinement of the processes harvest-logs starts (issue 20 #1b,
// issue 33): a confined child writes only beneath its directory, and a
// compile reads and executes only what it is given, at every ABI we degrade
// to; without Landlock (simulated) it runs, unconfined, and the harvest
// summary says so.
#include "mlgo/compile/CompileConfinement.h"
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

std::string realPath(const std::string &path) { return fs::canonical(path).string(); }

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

TEST(Confinement, ReadAndExecuteRightsAreHandledFromAbi1) {
  constexpr uint64_t Execute = 1u << 0, ReadFile = 1u << 2, ReadDir = 1u << 3;
  EXPECT_EQ(landlockReadExecRights(0), 0u);
  EXPECT_EQ(landlockHandledRights(0, true), 0u);
  for (int abi = 1; abi <= 7; ++abi) {
    EXPECT_EQ(landlockReadExecRights(abi), Execute | ReadFile | ReadDir) << abi;
    EXPECT_EQ(landlockHandledRights(abi, false), landlockWriteRights(abi)) << abi; // a write-only ruleset
    EXPECT_EQ(landlockHandledRights(abi, true), landlockWriteRights(abi) | Execute | ReadFile | ReadDir) << abi;
  }
}

TEST(Confinement, TheToolchainIsTheCompilersInstallation) {
  // /usr/bin/clang-22 is a link into /usr/lib/llvm-22/bin.
  EXPECT_EQ(toolchainPrefix("clang-22"), "/usr/lib/llvm-22");
  EXPECT_EQ(toolchainPrefix("/usr/bin/opt-22"), "/usr/lib/llvm-22");
  EXPECT_EQ(toolchainPrefix("/nonexistent/bin/opt"), "");
  test::TempDir dir; // not in a bin directory: its own directory
  std::string tool = test::writeScript(dir / "tool", "#!/bin/sh\nexit 0\n");
  EXPECT_EQ(toolchainPrefix(tool), fs::canonical(dir.path()).string());
  // A script's interpreter is executable too.
  ReadExecRules rules = toolReadExecRules(tool);
  EXPECT_NE(std::find(rules.Executable.begin(), rules.Executable.end(), toolchainPrefix("/bin/sh")),
            rules.Executable.end());
}

class ConfinedCompile : public ::testing::TestWithParam<int> {};

// /bin/sh as the "compiler": it may run what lies in its installation
// (/usr), read its input and the system's libraries; nothing else.
TEST_P(ConfinedCompile, ReadsAndExecutesOnlyWhatItIsGiven) {
  int abi = GetParam();
  if (landlockSupport().Abi < abi)
    GTEST_SKIP() << "the kernel offers Landlock ABI " << landlockSupport().Abi;
  RestoreProbe restore;
  setLandlockAbiForTesting(abi);
  test::TempDir dir;
  std::string work = dir / "work", input = dir / "corpus/m.bc", secret = dir / "corpus/other.bc",
              program = dir / "hostile/run";
  fs::create_directories(work);
  fs::create_directories(dir / "corpus");
  fs::create_directories(dir / "hostile");
  test::writeFile(input, "the module\n");
  test::writeFile(secret, "another module\n");
  test::writeScript(program, "#!/bin/sh\necho ran > " + work + "/ran\n");
  ReadExecRules rules = toolReadExecRules("/bin/sh");
  rules.Readable.push_back(input);
  SpawnOptions options{{"/bin/sh", "-c",
                        "cat " + input + " > " + work + "/input; cat " + secret + " > " + work + "/secret; ls " +
                            dir.path() + "/corpus > " + work + "/listing; " + program + "; true"},
                       "/dev/null",
                       "/dev/null"};
  options.ConfineWritesTo = work;
  options.ReadExec = rules;
  auto child = ChildProcess::spawn(options);
  ASSERT_TRUE(static_cast<bool>(child)) << llvm::toString(child.takeError());
  EXPECT_TRUE(child->wait().ok());
  EXPECT_EQ(test::readFile(work + "/input"), "the module\n");
  EXPECT_EQ(test::readFile(work + "/secret"), "");  // another file of the same directory
  EXPECT_EQ(test::readFile(work + "/listing"), ""); // nor may it list the directory
  EXPECT_FALSE(fs::exists(work + "/ran"));          // a program outside its installation
}

INSTANTIATE_TEST_SUITE_P(Abi, ConfinedCompile, ::testing::Values(1, 3, 7));

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
  EXPECT_FALSE(j["confinement"].contains("readable")); // nothing was confined: no list pretends otherwise
}

TEST(Confinement, TheSummaryListsWhatCompilesMayReadAndExecute) {
  RestoreProbe restore;
  setLandlockAbiForTesting(7);
  test::TempDir dir;
  HarvestOptions options;
  options.Compiler.Kind = CompilerKind::Clang;
  options.CompilerReadableDirs = {dir.path()};
  HarvestSummary summary;
  summary.Confinement = landlockSupport();
  nlohmann::ordered_json j = summary.toJson(options)["confinement"];
  auto executable = j["executable"].get<std::vector<std::string>>();
  for (const std::string &path : {std::string("/usr/lib/llvm-22"), realPath("/lib64/ld-linux-x86-64.so.2")})
    EXPECT_NE(std::find(executable.begin(), executable.end(), path), executable.end()) << path << " in " << j;
  EXPECT_EQ(std::find(executable.begin(), executable.end(), "/usr"), executable.end()) << j; // not all of /usr
  auto readable = j["readable"].get<std::vector<std::string>>();
  for (const std::string &path :
       {std::string("/usr/lib"), realPath("/etc/ld.so.cache"), fs::canonical(dir.path()).string()})
    EXPECT_NE(std::find(readable.begin(), readable.end(), path), readable.end()) << path << " in " << j;
}

} // namespace
