#include "mlgo/support/ShellWords.h"

#include <gtest/gtest.h>

using namespace mlgo;
using Words = std::vector<std::string>;

namespace {

Words split(const std::string &s) {
  auto words = splitShellWords(s);
  EXPECT_TRUE(static_cast<bool>(words)) << llvm::toString(words.takeError());
  return words ? *words : Words{};
}

TEST(ShellWords, PlainWhitespaceSplitsAsBefore) {
  EXPECT_EQ(split("  clang -O2\t-c a.c  -o a.o "), (Words{"clang", "-O2", "-c", "a.c", "-o", "a.o"}));
  EXPECT_EQ(split(""), Words{});
}

TEST(ShellWords, Quotes) {
  // corpus-format.md X1.
  EXPECT_EQ(split("clang -c 'my dir/a.c' -o \"out dir/a.o\""),
            (Words{"clang", "-c", "my dir/a.c", "-o", "out dir/a.o"}));
  EXPECT_EQ(split("a'b'\"c\"d"), Words{"abcd"});
  EXPECT_EQ(split("'' \"\""), (Words{"", ""}));
  EXPECT_EQ(split("'a\\b'"), Words{"a\\b"});
}

TEST(ShellWords, Backslashes) {
  EXPECT_EQ(split("a\\ b c"), (Words{"a b", "c"}));
  EXPECT_EQ(split("\"a\\\"b\\$c\\d\""), Words{"a\"b$c\\d"});
  EXPECT_EQ(split("-DX=\\\"v\\\""), Words{"-DX=\"v\""});
}

TEST(ShellWords, Errors) {
  EXPECT_FALSE(static_cast<bool>(splitShellWords("a 'b")));
  EXPECT_FALSE(static_cast<bool>(splitShellWords("a \"b")));
  EXPECT_FALSE(static_cast<bool>(splitShellWords("a\\")));
}

} // namespace
