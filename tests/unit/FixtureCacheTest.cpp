// The test fixture cache (tests/support/FixtureCache.h): a compile runs once
// per command and source text; anything else that differs runs it again.
#include "support/FixtureCache.h"
#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <unistd.h>

using namespace mlgo::test;

namespace {

// A real clang-22 compile that also counts its runs in runs.txt.
std::string countingCompile(const std::string &flags) {
  return quote(MLGO_CLANG) + " " + flags + " -c src/f.c -o obj/f.o && echo run >> runs.txt";
}

size_t runs(const TempDir &dir) {
  std::string text = std::filesystem::exists(dir / "runs.txt") ? readFile(dir / "runs.txt") : "";
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(FixtureCache, AnIdenticalCompileIsCopiedAndAnyChangeRecompiles) {
  TempDir a, b;
  // A source unique to this run, so that an earlier run's cache cannot answer.
  std::string source = "int f(void) { return " + std::to_string(::getpid()) + "; }\n";
  writeFile(a / "src/f.c", source);
  compileCached(countingCompile("-O1"), "src/f.c", "obj/f.o", a.path());
  EXPECT_EQ(runs(a), 1u);
  std::string first = readFile(a / "obj/f.o");
  ASSERT_FALSE(first.empty());

  writeFile(b / "src/f.c", source);
  compileCached(countingCompile("-O1"), "src/f.c", "obj/f.o", b.path());
  EXPECT_EQ(runs(b), 0u) << "the same command and source are copied, not compiled";
  EXPECT_EQ(readFile(b / "obj/f.o"), first);

  compileCached(countingCompile("-O2"), "src/f.c", "obj/f.o", b.path());
  EXPECT_EQ(runs(b), 1u) << "another command compiles";
  writeFile(b / "src/f.c", source + "int g(void) { return 0; }\n");
  compileCached(countingCompile("-O2"), "src/f.c", "obj/f.o", b.path());
  EXPECT_EQ(runs(b), 2u) << "another source text compiles";
}

} // namespace
