#include "mlgo/extract/CmdFilter.h"
#include "mlgo/extract/OutputOption.h"

#include <gtest/gtest.h>

using namespace mlgo;

namespace {

const std::string Cmd("-cc1\0x/y/foobar.cpp\0-Oz\0-Ifoo\0-o\0bin/out.o\0", 43);

bool keeps(const std::string &pattern, const std::string &cmd = Cmd) {
  auto filter = CmdFilter::compile(pattern);
  EXPECT_TRUE(static_cast<bool>(filter)) << llvm::toString(filter.takeError());
  return filter && filter->matches(cmd);
}

TEST(CmdFilter, SplitDropsOnlyTheTrailingEmptyField) {
  auto fields = splitCommandLineSection(Cmd);
  ASSERT_EQ(fields.size(), 6u);
  EXPECT_EQ(fields.front().str(), "-cc1");
  EXPECT_EQ(fields.back().str(), "bin/out.o");
  EXPECT_EQ(splitCommandLineSection(std::string("a\0\0b\0", 5)).size(), 3u);
  EXPECT_TRUE(splitCommandLineSection("").empty());
}

TEST(CmdFilter, UpstreamCases) {
  // corpus-format.md 7.2 #12.
  EXPECT_TRUE(keeps(".*"));
  EXPECT_TRUE(keeps("^-Oz$"));
  EXPECT_FALSE(keeps("^-O3$"));
  EXPECT_TRUE(keeps("-O")); // unanchored search
}

TEST(CmdFilter, EmptyMatchingPatternDoesNotPassEverything) {
  // X6: the trailing empty field no longer matches '^$'.
  auto filter = CmdFilter::compile("^$");
  ASSERT_TRUE(static_cast<bool>(filter));
  EXPECT_TRUE(filter->matchesEmpty());
  EXPECT_FALSE(filter->matches(Cmd));
}

TEST(CmdFilter, MatchesRawBytes) {
  // D7: a non-UTF-8 command line is matched as bytes, never decoded.
  EXPECT_FALSE(keeps("x", "\xff"));
  EXPECT_TRUE(keeps("\xff", std::string("-cc1\0\xff\0", 7)));
}

TEST(CmdFilter, RejectsInvalidAndPythonOnlyPatterns) {
  EXPECT_FALSE(static_cast<bool>(CmdFilter::compile("(")));
  for (const char *p : {"(?P<x>a)", "(?<=a)b", "(?i)abc", "\\Aabc"}) {
    auto f = CmdFilter::compile(p);
    ASSERT_FALSE(static_cast<bool>(f)) << p;
    EXPECT_NE(llvm::toString(f.takeError()).find(p), std::string::npos);
  }
}

std::string outputOf(std::vector<std::string> args) {
  auto found = findOutputOption(args);
  if (!found)
    return "error: " + llvm::toString(found.takeError());
  return *found ? (*found)->Path : "none";
}

TEST(OutputOption, AllSpellings) {
  // D2 / X2.
  EXPECT_EQ(outputOf({"clang", "-c", "a.c", "-o", "a.o"}), "a.o");
  EXPECT_EQ(outputOf({"clang", "-c", "a.c", "-oa.o"}), "a.o");
  EXPECT_EQ(outputOf({"clang", "--output=a.o"}), "a.o");
  EXPECT_EQ(outputOf({"clang", "--output", "a.o"}), "a.o");
  EXPECT_EQ(outputOf({"clang", "-objcmt-migrate-all", "-object", "-o", "x.o"}), "x.o");
  EXPECT_EQ(outputOf({"clang", "-c", "a.c"}), "none");
  EXPECT_EQ(outputOf({"clang", "-o", "first.o", "-o", "second.o"}), "first.o");
  EXPECT_EQ(outputOf({"clang", "-c", "a.c", "-o"}), "error: missing value for -o"); // D3 / X4
}

} // namespace
