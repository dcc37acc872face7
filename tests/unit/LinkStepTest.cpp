// The pure parts of harvest-logs --link: the template, the command it
// makes, the link order (the e2e suite HarvestLink runs real links).
#include "mlgo/evaluate/LinkStep.h"

#include <gtest/gtest.h>

using namespace mlgo;
using Words = std::vector<std::string>;

namespace {

std::string error(llvm::Expected<Words> words) {
  if (words)
    return "";
  return llvm::toString(words.takeError());
}

TEST(LinkStep, TemplateIsSplitAsShellWords) {
  auto words = parseLinkTemplate("clang-22 -fuse-ld=lld '-Wl,--Map={output}.map' {objects} -lm -o {output}");
  ASSERT_TRUE(static_cast<bool>(words)) << llvm::toString(words.takeError());
  EXPECT_EQ(*words,
            (Words{"clang-22", "-fuse-ld=lld", "-Wl,--Map={output}.map", "{objects}", "-lm", "-o", "{output}"}));
}

TEST(LinkStep, TemplateNeedsObjectsAsAWordAndOutputOnce) {
  EXPECT_NE(error(parseLinkTemplate("clang-22 -o {output}")).find("{objects}"), std::string::npos);
  EXPECT_NE(error(parseLinkTemplate("clang-22 x{objects} -o {output}")).find("{objects}"), std::string::npos);
  EXPECT_NE(error(parseLinkTemplate("clang-22 {objects} {objects} -o {output}")).find("{objects}"), std::string::npos);
  EXPECT_NE(error(parseLinkTemplate("clang-22 {objects} -o a.out")).find("{output}"), std::string::npos);
  EXPECT_NE(error(parseLinkTemplate("{objects} -o {output}")).find("start with the linker"), std::string::npos);
  EXPECT_NE(error(parseLinkTemplate("")).find("empty"), std::string::npos);
  EXPECT_NE(error(parseLinkTemplate("clang-22 '{objects} -o {output}")).find("--link"), std::string::npos);
}

TEST(LinkStep, CommandPutsTheObjectsInPlaceAndTheOutputInEveryWord) {
  Words words = {"ld.lld", "-Map={output}.map", "{objects}", "-o", "{output}"};
  EXPECT_EQ(linkCommand(words, {"a.o", "b c.o"}, "/out/linked"),
            (Words{"ld.lld", "-Map=/out/linked.map", "a.o", "b c.o", "-o", "/out/linked"}));
  EXPECT_EQ(linkCommand(words, {}, "x"), (Words{"ld.lld", "-Map=x.map", "-o", "x"}));
}

TEST(LinkStep, OrderIsTheCorpusOrTheListedOne) {
  Words corpus = {"main.o", "a.o", "b.o", "c.o"}, planned = {"c.o", "a.o", "main.o"};
  auto order = linkOrder(corpus, planned, nullptr, "");
  ASSERT_TRUE(static_cast<bool>(order));
  EXPECT_EQ(*order, (Words{"main.o", "a.o", "c.o"})); // the corpus' order, planned modules only

  Words listed = {"c.o", "b.o", "main.o", "a.o"};
  order = linkOrder(corpus, planned, &listed, "order.txt");
  ASSERT_TRUE(static_cast<bool>(order));
  EXPECT_EQ(*order, (Words{"c.o", "main.o", "a.o"})); // b.o is not harvested

  Words unknown = {"c.o", "main.o", "a.o", "nosuch.o"};
  EXPECT_NE(error(linkOrder(corpus, planned, &unknown, "order.txt")).find("entry 4, 'nosuch.o', is not a module"),
            std::string::npos);
  Words twice = {"c.o", "main.o", "a.o", "c.o"};
  EXPECT_NE(error(linkOrder(corpus, planned, &twice, "order.txt")).find("'c.o', is listed twice"), std::string::npos);
  Words missing = {"c.o", "main.o"};
  EXPECT_NE(error(linkOrder(corpus, planned, &missing, "order.txt")).find("does not list module 'a.o'"),
            std::string::npos);
}

TEST(LinkStep, StagedObjectsNeverNest) {
  EXPECT_EQ(stagedObjectPath("/out", "lib/a.o"), "/out/.mlgo-harvest/objects/lib%2Fa.o.o");
  EXPECT_NE(stagedObjectPath("/out", "a"), stagedObjectPath("/out", "a.o"));
}

} // namespace
