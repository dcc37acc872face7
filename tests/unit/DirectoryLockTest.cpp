// DirectoryLock (one run per output directory) and workDirectoryName (work
// directories that never nest): issue #20, findings 10 and 11.
#include "mlgo/support/DirectoryLock.h"
#include "mlgo/compile/WorkDirectory.h"

#include "support/TestSupport.h"

#include <set>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlgo;
using namespace mlgo::test;

namespace {

TEST(DirectoryLock, SecondHolderIsRefusedWithTheDirectoryAndPid) {
  TempDir dir;
  auto first = DirectoryLock::acquire(dir / "out", dir / "out/.state");
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  EXPECT_EQ(readFile(dir / "out/.state/lock"), std::to_string(::getpid()) + "\n");
  // flock conflicts between open file descriptions, even in one process.
  auto second = DirectoryLock::acquire(dir / "out", dir / "out/.state");
  ASSERT_FALSE(static_cast<bool>(second));
  std::string message = llvm::toString(second.takeError());
  EXPECT_NE(message.find("the output directory " + (dir / "out") + " is in use by another run (pid " +
                         std::to_string(::getpid()) + ")"),
            std::string::npos)
      << message;
}

TEST(DirectoryLock, ReleasedOnDestructionAndOnTheHoldersDeath) {
  TempDir dir;
  {
    auto first = DirectoryLock::acquire(dir.path(), dir / "s");
    ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  }
  auto again = DirectoryLock::acquire(dir.path(), dir / "s");
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  *again = DirectoryLock(); // released

  // A child takes the lock and is killed: the lock goes with it.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  if (child == 0) {
    auto lock = DirectoryLock::acquire(dir.path(), dir / "s");
    char c = lock ? '1' : '0';
    if (!lock)
      llvm::consumeError(lock.takeError());
    [[maybe_unused]] ssize_t n = ::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1); // the child writes before pausing (or dies: EOF)
  ::close(ready[0]);
  ASSERT_EQ(c, '1');
  auto busy = DirectoryLock::acquire(dir.path(), dir / "s");
  EXPECT_FALSE(static_cast<bool>(busy));
  if (!busy) {
    EXPECT_NE(llvm::toString(busy.takeError()).find("(pid " + std::to_string(child) + ")"), std::string::npos);
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  auto after = DirectoryLock::acquire(dir.path(), dir / "s");
  EXPECT_TRUE(static_cast<bool>(after)) << (after ? "" : llvm::toString(after.takeError()));
}

TEST(WorkDirectoryName, FlatAndDistinct) {
  EXPECT_EQ(workDirectoryName("a"), "a");
  EXPECT_EQ(workDirectoryName("a/b"), "a%2Fb");
  EXPECT_EQ(workDirectoryName("a%2Fb"), "a%252Fb"); // a name that looks encoded stays distinct
  std::set<std::string> names;
  for (const char *m : {"a", "a/b", "a%2Fb", "a/b/c", "a%2Fb/c", "a/b%2Fc", "lib/x.o", "lib%x.o"}) {
    std::string name = workDirectoryName(m);
    EXPECT_EQ(name.find('/'), std::string::npos) << m;
    EXPECT_TRUE(names.insert(name).second) << m << " -> " << name << " collides";
  }
  std::string deep(100, 'd');
  std::string longA = deep + "/" + deep + "/a", longB = deep + "/" + deep + "/b";
  EXPECT_LE(workDirectoryName(longA).size(), 255u);
  EXPECT_NE(workDirectoryName(longA), workDirectoryName(longB));
  EXPECT_NE(workDirectoryName(longA).find("%~"), std::string::npos);
}

} // namespace
