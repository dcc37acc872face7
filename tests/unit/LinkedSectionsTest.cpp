// Splitting linker-merged .llvmbc/.llvmcmd sections, on bitcode the real
// clang-22 writes.
#include "mlgo/extract/LinkedSections.h"
#include "mlgo/corpus/BitcodeCheck.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

using namespace mlgo;
using namespace mlgo::test;

namespace {

std::string bitcodeOf(const TempDir &dir, const std::string &name, const std::string &source,
                      const std::string &flags = "") {
  writeFile(dir / (name + ".c"), source);
  mustRun(std::string(MLGO_CLANG) + " -O1 -c -emit-llvm " + flags + " " + quote(dir / (name + ".c")) + " -o " +
          quote(dir / (name + ".bc")));
  return readFile(dir / (name + ".bc"));
}

std::vector<std::string> strings(const std::vector<llvm::StringRef> &refs) {
  return std::vector<std::string>(refs.begin(), refs.end());
}

TEST(LinkedSections, SplitsConcatenatedBitcodeWithAndWithoutPadding) {
  TempDir dir;
  std::string a = bitcodeOf(dir, "a", "int a(int x) { return x + 1; }\n");
  std::string b = bitcodeOf(dir, "b", "static int sq(int x) { return x * x; }\nint b(int x) { return sq(x); }\n");
  ASSERT_EQ(a.size() % 4, 0u);

  auto one = splitBitcodeSection(a);
  ASSERT_TRUE(static_cast<bool>(one)) << llvm::toString(one.takeError());
  EXPECT_TRUE(strings(*one) == std::vector<std::string>{a});

  // The pieces point into the section, which must outlive them.
  std::string ab = a + b;
  auto two = splitBitcodeSection(ab);
  ASSERT_TRUE(static_cast<bool>(two)) << llvm::toString(two.takeError());
  EXPECT_TRUE(strings(*two) == (std::vector<std::string>{a, b}));

  // Alignment padding between and after the files is skipped.
  std::string padded = a + std::string(12, '\0') + b + std::string(3, '\0') + a;
  auto three = splitBitcodeSection(padded);
  ASSERT_TRUE(static_cast<bool>(three)) << llvm::toString(three.takeError());
  EXPECT_TRUE(strings(*three) == (std::vector<std::string>{a, b, a}));
  for (llvm::StringRef piece : *three)
    EXPECT_FALSE(static_cast<bool>(checkBitcode(piece)));

  EXPECT_TRUE(splitBitcodeSection("")->empty());
}

TEST(LinkedSections, SplitsWrappedBitcodeByItsHeader) {
  TempDir dir;
  // Darwin targets wrap bitcode (DE C0 17 0B, offset, size).
  std::string w = bitcodeOf(dir, "w", "int w(void) { return 7; }\n", "-target x86_64-apple-macos11");
  ASSERT_EQ(w.substr(0, 4), "\xDE\xC0\x17\x0B");
  std::string raw = bitcodeOf(dir, "r", "int r(void) { return 8; }\n");
  std::string section = w + raw + w;
  auto pieces = splitBitcodeSection(section);
  ASSERT_TRUE(static_cast<bool>(pieces)) << llvm::toString(pieces.takeError());
  ASSERT_EQ(pieces->size(), 3u);
  // A wrapper keeps its zero padding to 16 bytes, as clang writes it.
  EXPECT_TRUE(strings(*pieces) == (std::vector<std::string>{w, raw, w}));
  EXPECT_FALSE(static_cast<bool>(checkBitcode((*pieces)[0])));
}

TEST(LinkedSections, GarbageIsAnErrorNamingTheOffset) {
  TempDir dir;
  std::string a = bitcodeOf(dir, "a", "int a(int x) { return x + 1; }\n");
  std::string withTail = a + "garbage!";
  auto tail = splitBitcodeSection(withTail);
  ASSERT_FALSE(static_cast<bool>(tail));
  EXPECT_NE(llvm::toString(tail.takeError()).find("at byte " + std::to_string(a.size())), std::string::npos);
  // A file cut short: its last block claims more bytes than are left.
  auto cut = splitBitcodeSection(llvm::StringRef(a).drop_back(8));
  EXPECT_FALSE(static_cast<bool>(cut));
  llvm::consumeError(cut.takeError());
  std::string wrapper("\xDE\xC0\x17\x0B\0\0\0\0\x14\0\0\0\xff\0\0\0\0\0\0\0", 20);
  auto badWrapper = splitBitcodeSection(wrapper);
  EXPECT_FALSE(static_cast<bool>(badWrapper));
  llvm::consumeError(badWrapper.takeError());
}

TEST(LinkedSections, SplitsCommandLinesAtEachCc1) {
  std::string first("-cc1\0-O2\0-main-file-name\0a.c\0", 30);
  std::string second("-cc1\0-Oz\0-main-file-name\0sub/b.cpp\0-x\0c++\0", 42);
  std::string both = first + second;
  auto lines = splitCommandLines(both);
  ASSERT_TRUE(static_cast<bool>(lines)) << llvm::toString(lines.takeError());
  EXPECT_EQ(strings(*lines), (std::vector<std::string>{first, second}));
  EXPECT_EQ(mainFileName((*lines)[0])->str(), "a.c");
  EXPECT_EQ(mainFileName((*lines)[1])->str(), "sub/b.cpp");
  EXPECT_FALSE(mainFileName(std::string("-cc1\0-main-file-name\0", 21)).has_value());

  auto one = splitCommandLines(first);
  ASSERT_TRUE(static_cast<bool>(one));
  EXPECT_EQ(strings(*one), std::vector<std::string>{first});
  std::string padding = std::string("\0\0", 2) + first;
  auto padded = splitCommandLines(padding);
  ASSERT_TRUE(static_cast<bool>(padded));
  EXPECT_EQ(strings(*padded), std::vector<std::string>{first});
  EXPECT_TRUE(splitCommandLines("")->empty());

  auto bad = splitCommandLines(std::string("-O2\0-cc1\0", 9));
  EXPECT_FALSE(static_cast<bool>(bad));
  llvm::consumeError(bad.takeError());
}

} // namespace
