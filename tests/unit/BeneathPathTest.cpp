// BeneathPath: no symbolic link is followed below a directory the user named,
// in any component (issue #33, findings 3 and 5). Every test runs twice: with
// openat2 and with the one-component-at-a-time walk older kernels get.
#include "mlgo/support/BeneathPath.h"

#include "support/TestSupport.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlgo;
using namespace mlgo::test;

namespace {

class BeneathPath : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override {
    setOpenat2Enabled(GetParam());
    writeFile(Dir / "root/logs/real/m0.log", "ours\n");
    writeFile(Dir / "elsewhere/m0.log", "not ours\n");
    ASSERT_EQ(::symlink((Dir / "elsewhere").c_str(), (Dir / "root/logs/sub").c_str()), 0);
    ASSERT_EQ(::symlink((Dir / "elsewhere/m0.log").c_str(), (Dir / "root/logs/real/linked.log").c_str()), 0);
  }
  void TearDown() override { setOpenat2Enabled(true); }

  std::string root() const { return Dir / "root"; }

  // The error's message, which must name the link and say it is one.
  template <typename T> std::string refusal(llvm::Expected<T> result) {
    EXPECT_FALSE(static_cast<bool>(result));
    return result ? std::string() : llvm::toString(result.takeError());
  }

  TempDir Dir;
};

std::string readAll(int fd) {
  std::string out;
  char buffer[256];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;)
    out.append(buffer, static_cast<size_t>(n));
  return out;
}

TEST_P(BeneathPath, OpensAFileBelowTheDirectory) {
  auto fd = openRegularFileBeneath(root(), "logs/real/m0.log");
  ASSERT_TRUE(static_cast<bool>(fd)) << llvm::toString(fd.takeError());
  EXPECT_EQ(readAll(fd->get()), "ours\n");
}

TEST_P(BeneathPath, ALinkInTheMiddleIsNamedAndNotFollowed) {
  std::string message = refusal(openRegularFileBeneath(root(), "logs/sub/m0.log"));
  EXPECT_NE(message.find(root() + "/logs/sub: a symbolic link below " + root()), std::string::npos) << message;
  EXPECT_EQ(message.find("m0.log"), std::string::npos) << message; // the link, not the file, is named
}

TEST_P(BeneathPath, ALinkAtTheEndIsNamedAndNotFollowed) {
  std::string message = refusal(openBeneath(root(), "logs/real/linked.log", O_RDONLY));
  EXPECT_NE(message.find(root() + "/logs/real/linked.log: a symbolic link below"), std::string::npos) << message;
}

TEST_P(BeneathPath, DotDotAndAbsolutePathsAreRefused) {
  std::string up = refusal(openBeneath(root(), "logs/../../elsewhere/m0.log", O_RDONLY));
  EXPECT_NE(up.find("not a path inside " + root()), std::string::npos) << up;
  std::string absolute = refusal(openBeneath(root(), Dir / "elsewhere/m0.log", O_RDONLY));
  EXPECT_NE(absolute.find("not a path inside " + root()), std::string::npos) << absolute;
}

TEST_P(BeneathPath, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((Dir / "root/logs/real/fifo.log").c_str(), 0644), 0);
  std::string message = refusal(openRegularFileBeneath(root(), "logs/real/fifo.log"));
  EXPECT_NE(message.find("fifo.log: not a regular file"), std::string::npos) << message;
}

TEST_P(BeneathPath, AFileWhereADirectoryShouldBeIsNamed) {
  writeFile(Dir / "root/logs/plain", "x");
  std::string message = refusal(openRegularFileBeneath(root(), "logs/plain/m0.log"));
  EXPECT_NE(message.find(root() + "/logs/plain: Not a directory"), std::string::npos) << message;
}

TEST_P(BeneathPath, RemoveNeverReachesThroughALink) {
  llvm::Error e = removeBeneath(root(), "logs/sub/m0.log");
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("logs/sub: a symbolic link"), std::string::npos);
  EXPECT_EQ(readFile(Dir / "elsewhere/m0.log"), "not ours\n");
  // A link as the last component is removed itself, not its target.
  ASSERT_FALSE(static_cast<bool>(removeBeneath(root(), "logs/real/linked.log")));
  EXPECT_FALSE(exists(Dir / "root/logs/real/linked.log"));
  EXPECT_EQ(readFile(Dir / "elsewhere/m0.log"), "not ours\n");
  // Absent, or below an absent directory: nothing to do.
  EXPECT_FALSE(static_cast<bool>(removeBeneath(root(), "logs/real/none.log")));
  EXPECT_FALSE(static_cast<bool>(removeBeneath(root(), "logs/none/m0.log")));
  ASSERT_FALSE(static_cast<bool>(removeBeneath(root(), "logs/real/m0.log")));
  EXPECT_FALSE(exists(Dir / "root/logs/real/m0.log"));
}

TEST_P(BeneathPath, ExistsSaysWhatIsThereAndRefusesLinksOnTheWay) {
  auto yes = existsBeneath(root(), "logs/real/m0.log");
  ASSERT_TRUE(static_cast<bool>(yes));
  EXPECT_TRUE(*yes);
  auto no = existsBeneath(root(), "logs/none/m0.log");
  ASSERT_TRUE(static_cast<bool>(no));
  EXPECT_FALSE(*no);
  EXPECT_NE(refusal(existsBeneath(root(), "logs/sub/m0.log")).find("logs/sub: a symbolic link"), std::string::npos);
}

TEST_P(BeneathPath, CreatingParentsStopsAtALink) {
  auto made = openParentBeneath(root(), "logs/new/deeper/m0.log", /*create=*/true);
  ASSERT_TRUE(static_cast<bool>(made)) << llvm::toString(made.takeError());
  EXPECT_EQ(made->Name, "m0.log");
  struct stat st;
  ASSERT_EQ(::stat((Dir / "root/logs/new/deeper").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  std::string message = refusal(openParentBeneath(root(), "logs/sub/new/m0.log", /*create=*/true));
  EXPECT_NE(message.find("logs/sub: a symbolic link"), std::string::npos) << message;
  EXPECT_FALSE(exists(Dir / "elsewhere/new"));
}

TEST_P(BeneathPath, RemovingATreeRemovesLinksNotWhatTheyName) {
  // A work directory with a link inside, as a corpus or a planter may leave.
  writeFile(Dir / "root/work/0/deep/file", "x");
  ASSERT_EQ(::symlink((Dir / "elsewhere").c_str(), (Dir / "root/work/0/deep/away").c_str()), 0);
  ASSERT_FALSE(static_cast<bool>(removeTreeBeneath(root(), "work/0")));
  EXPECT_FALSE(exists(Dir / "root/work/0"));
  EXPECT_EQ(readFile(Dir / "elsewhere/m0.log"), "not ours\n");
  // The tree itself a link: the link goes, the directory it names stays whole.
  ASSERT_EQ(::symlink((Dir / "elsewhere").c_str(), (Dir / "root/work/1").c_str()), 0);
  ASSERT_FALSE(static_cast<bool>(removeTreeBeneath(root(), "work/1")));
  EXPECT_EQ(readFile(Dir / "elsewhere/m0.log"), "not ours\n");
  // A link on the way: refused, nothing removed.
  writeFile(Dir / "elsewhere/2/kept", "x");
  llvm::Error e = removeTreeBeneath(root(), "logs/sub/2");
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("logs/sub: a symbolic link"), std::string::npos);
  EXPECT_TRUE(exists(Dir / "elsewhere/2/kept"));
  EXPECT_FALSE(static_cast<bool>(removeTreeBeneath(root(), "work/none")));
}

TEST_P(BeneathPath, MakingDirectoriesStopsAtALink) {
  ASSERT_FALSE(static_cast<bool>(makeDirectoriesBeneath(root(), "state/work/3")));
  struct stat st;
  ASSERT_EQ(::lstat((Dir / "root/state/work/3").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  llvm::Error e = makeDirectoriesBeneath(root(), "logs/sub/made");
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("logs/sub: a symbolic link"), std::string::npos);
  EXPECT_FALSE(exists(Dir / "elsewhere/made"));
}

TEST_P(BeneathPath, MissingIsToldApart) {
  auto result = openRegularFileBeneath(root(), "logs/none/m0.log");
  ASSERT_FALSE(static_cast<bool>(result));
  llvm::Error e = result.takeError();
  EXPECT_TRUE(consumeIfMissing(e));
  EXPECT_FALSE(static_cast<bool>(e));
  auto linked = openRegularFileBeneath(root(), "logs/sub/m0.log");
  ASSERT_FALSE(static_cast<bool>(linked));
  llvm::Error kept = linked.takeError();
  EXPECT_FALSE(consumeIfMissing(kept));
  EXPECT_TRUE(static_cast<bool>(kept));
  llvm::consumeError(std::move(kept));
}

INSTANTIATE_TEST_SUITE_P(Resolution, BeneathPath, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? std::string("Openat2") : std::string("ComponentWalk");
                         });

} // namespace
