// Nothing below a directory we were given is followed, as a property: every
// path a harvest, an exploration (its rounds, its commit, the kept
// program's link), a policy batch and the readers of a finished harvest
// touch is, in turn, replaced by a symbolic link to a bait file or
// directory outside, and the same command is run again. Whatever it then
// does (resume, finish a commit, refuse), the bait is left as it was and
// none of its bytes reach anything under OUT (docs/security.md). The
// directory states come from real runs: an exploration killed as its commit
// begins (every round done), one killed half-way through installing its
// commit, and a finished batch.
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Bait = "BAIT-CONTENT-31337";

class HarvestPlantedLinks : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    makeNestedHarvestCorpus(Fixture->path(), "corpus");
  }
  static void TearDownTestSuite() {
    delete Fixture;
    Fixture = nullptr;
  }
  static std::string corpus() { return *Fixture / "corpus"; }

  static std::string linkFlag() {
    return "--link=" + quote("ld.lld-22 -r --allow-multiple-definition {objects} -o {output}");
  }

  // Bait outside OUT: a file and a directory holding one, both holding Bait.
  void makeBait() {
    fs::remove_all(Elsewhere);
    fs::create_directories(Elsewhere + "/dir");
    writeFile(Elsewhere + "/file", Bait + " file\n");
    writeFile(Elsewhere + "/dir/inside", Bait + " inside\n");
  }
  void expectBaitUntouched(const std::string &what) {
    std::set<std::string> listed = listTree(Elsewhere, /*includeHidden=*/true);
    listed.erase(std::string("copy"));
    std::erase_if(listed, [](const std::string &f) { return f.starts_with("copy/"); });
    EXPECT_EQ(listed, (std::set<std::string>{"dir/", "dir/inside", "file"})) << what;
    EXPECT_EQ(readFile(Elsewhere + "/file"), Bait + " file\n") << what;
    EXPECT_EQ(readFile(Elsewhere + "/dir/inside"), Bait + " inside\n") << what;
  }
  // Files under `dir` (not followed through a link) whose bytes hold Bait.
  static std::vector<std::string> holdingBait(const std::string &dir) {
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it)
      if (it->is_regular_file() && !it->is_symlink() && readFile(it->path().string()).find(Bait) != std::string::npos)
        found.push_back(it->path().string());
    return found;
  }

  // Every path below `dir`, relative, directories too; one per shape (digits
  // and the two module names alike), without the work directories' passing
  // contents.
  static std::vector<std::string> pathsByShape(const std::string &dir, std::set<std::string> &shapes) {
    std::vector<std::string> paths;
    static const std::regex Digits("[0-9]+");
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
      std::string relative = fs::relative(it->path(), dir).string();
      if (relative.find(".mlgo-harvest/work/") != std::string::npos)
        continue;
      std::string shape = std::regex_replace(relative, Digits, "#");
      if (shapes.insert(shape).second)
        paths.push_back(relative);
    }
    return paths;
  }

  // A directory's files and their bytes, for "left as it was".
  static std::map<std::string, std::string> snapshot(const std::string &dir) {
    std::map<std::string, std::string> files;
    if (!fs::is_directory(dir)) {
      files[""] = readFile(dir);
      return files;
    }
    for (const std::string &f : listTree(dir, /*includeHidden=*/true))
      files[f] = f.ends_with("/") ? "" : readFile(dir + "/" + f);
    return files;
  }

  // For each path of `state` not planted before, twice, on a fresh copy of
  // `state` at `out`: that path replaced by a link to the bait (a file's by
  // the bait file, a directory's by the bait directory), then by a link to
  // an outside copy of what was there (which every reader would accept, so
  // nothing but not following the link keeps the tools from using it).
  // Each time `command` runs, then the readers of a harvest, and neither
  // the bait nor the copy changes, and no bait byte reaches OUT.
  void plantEverywhere(const std::string &state, const std::string &out, const std::string &command,
                       std::set<std::string> &shapes) {
    for (const std::string &path : pathsByShape(state, shapes)) {
      for (bool copy : {false, true}) {
        makeBait();
        fs::remove_all(out);
        fs::copy(state, out, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
        std::string planted = out + "/" + path, target;
        bool directory = fs::is_directory(fs::symlink_status(planted));
        if (copy) {
          target = Elsewhere + "/copy";
          fs::copy(planted, target, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
        } else {
          target = Elsewhere + (directory ? "/dir" : "/file");
        }
        auto before = snapshot(target);
        fs::remove_all(planted);
        if (directory)
          fs::create_directory_symlink(target, planted);
        else
          fs::create_symlink(target, planted);
        std::vector<std::string> commands = {command, tool("training-log") + " trajectories " + quote(out),
                                             tool("compare-harvests") + " " + quote(out) + " " + quote(out)};
        for (const std::string &c : commands) {
          CommandResult r = run(c);
          std::string what = path + (copy ? " (a copy of it)" : " (the bait)") + ", " + c.substr(0, 60) + "... exit " +
                             std::to_string(r.ExitCode) + ": " + r.Err.substr(0, 1500);
          EXPECT_NE(r.ExitCode, 128 + SIGSEGV) << what;
          EXPECT_NE(r.ExitCode, 128 + SIGABRT) << what;
          EXPECT_EQ(snapshot(target), before) << what;
          if (copy)
            continue;
          expectBaitUntouched(what);
          EXPECT_EQ(holdingBait(out), std::vector<std::string>{}) << what;
          EXPECT_EQ(r.Err.find(Bait), std::string::npos) << what;
          EXPECT_EQ(r.Out.find(Bait), std::string::npos) << what;
        }
      }
      ++Planted;
    }
  }

  static TempDir *Fixture;
  TempDir Work;
  std::string Elsewhere = Work / "elsewhere";
  size_t Planted = 0;
};

TempDir *HarvestPlantedLinks::Fixture = nullptr;

TEST_F(HarvestPlantedLinks, NoPathBelowOutIsFollowedByAnyToolOrReader) {
  std::string out = Work / "out";
  std::string explore =
      harvestCommand(corpus(), out, "--mode=plugin --explore=1 --explore_order=first --keep_objects " + linkFlag());
  std::set<std::string> shapes;
  // Every round done, the commit not begun: a rerun resumes the base
  // harvest and the round, stages the commit and installs it.
  CommandResult r = run("env MLGO_EXPLORE_KILL_AT=1 " + explore);
  ASSERT_EQ(r.ExitCode, 128 + SIGKILL) << r.Err;
  std::string rounds = Work / "rounds";
  fs::rename(out, rounds);
  plantEverywhere(rounds, out, explore, shapes);
  // Killed while it installed: a rerun reads the commit and finishes it.
  fs::remove_all(out);
  fs::copy(rounds, out, fs::copy_options::recursive);
  r = run("env MLGO_EXPLORE_KILL_AT=6 " + explore);
  ASSERT_EQ(r.ExitCode, 128 + SIGKILL) << r.Err;
  ASSERT_TRUE(fs::exists(out + "/explore/commit/plan.json"));
  std::string committing = Work / "committing";
  fs::rename(out, committing);
  plantEverywhere(committing, out, explore, shapes);
  // A finished batch with its links: a rerun resumes every policy and links again.
  std::string batch = harvestCommand(corpus(), out, "--mode=plugin --policies=default,random:0.5:1 " + linkFlag());
  fs::remove_all(out);
  mustRun(batch);
  std::string batched = Work / "batched";
  fs::rename(out, batched);
  plantEverywhere(batched, out, batch, shapes);
  EXPECT_GT(Planted, 40u);
}

} // namespace
