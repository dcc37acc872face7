#include "mlgo/corpus/ModuleNaming.h"
#include "mlgo/support/PathComponent.h"
#include "mlgo/support/PathUtil.h"

#include <gtest/gtest.h>

using namespace mlgo;

namespace {

TEST(PathComponent, OnlySingleSafeNames) {
  for (const std::string &good :
       std::vector<std::string>{"sroa_savings", "a.b", "..x", "x..", "with space", std::string(247, 'n')})
    EXPECT_FALSE(static_cast<bool>(checkPathComponent(good, "name", 8))) << good;
  struct Case {
    std::string Name, Why;
  } bad[] = {{"", "empty"},
             {".", "directory"},
             {"..", "directory"},
             {"../x", "'/'"},
             {"a/b", "'/'"},
             {"/abs", "'/'"},
             {std::string("a\0b", 3), "NUL"},
             {std::string(248, 'n'), "too long"}};
  for (const Case &c : bad) {
    llvm::Error e = checkPathComponent(c.Name, "feature name", 8);
    ASSERT_TRUE(static_cast<bool>(e)) << c.Name;
    std::string text = llvm::toString(std::move(e));
    EXPECT_EQ(text.rfind("feature name '", 0), 0u) << text;
    EXPECT_NE(text.find(c.Why), std::string::npos) << text;
  }
}

TEST(PathUtil, JoinHasPythonSemantics) {
  EXPECT_EQ(joinPath("/output/directory", "lib/bar.o"), "/output/directory/lib/bar.o");
  EXPECT_EQ(joinPath("", "lib/obj_file.o"), "lib/obj_file.o");
  EXPECT_EQ(joinPath("base/", "x"), "base/x");
  EXPECT_EQ(joinPath("base", "/abs/x"), "/abs/x");
}

TEST(PathUtil, Normalize) {
  EXPECT_EQ(normalizePath("./a.o"), "a.o");
  EXPECT_EQ(normalizePath("a//b/./c/../d.o"), "a/b/d.o");
  EXPECT_EQ(normalizePath("../../x"), "../../x");
  EXPECT_EQ(normalizePath("a/../../x"), "../x");
  EXPECT_EQ(normalizePath("/../x"), "/x");
  EXPECT_EQ(normalizePath("a/.."), ".");
  // os.path.normpath's edge cases.
  EXPECT_EQ(normalizePath(""), "");
  EXPECT_EQ(normalizePath("."), ".");
  EXPECT_EQ(normalizePath("./"), ".");
  EXPECT_EQ(normalizePath(".."), "..");
  EXPECT_EQ(normalizePath("/"), "/");
  EXPECT_EQ(normalizePath("/.."), "/");
  EXPECT_EQ(normalizePath("///a//b/"), "/a/b");
  EXPECT_EQ(normalizePath("a/b/"), "a/b");
  EXPECT_EQ(normalizePath("a/./../.."), "..");
  EXPECT_EQ(normalizePath("../a/../b"), "../b");
  EXPECT_EQ(normalizePath("a/..b/...c"), "a/..b/...c");
}

TEST(PathUtil, DirAndBaseName) {
  EXPECT_EQ(dirName("lib/Foo/bar.cpp.o").str(), "lib/Foo");
  EXPECT_EQ(dirName("bar.o").str(), "");
  EXPECT_EQ(baseName("lib/Foo/bar.cpp.o").str(), "bar.cpp.o");
  EXPECT_TRUE(isWithin("/a/b/c", "/a/b"));
  EXPECT_FALSE(isWithin("/a/bc", "/a/b"));
}

std::string name(const std::string &rel, const std::string &base) {
  auto n = moduleNameForObject(rel, base);
  if (!n)
    return "error: " + llvm::toString(n.takeError());
  return *n;
}

TEST(ModuleNaming, NormalNamesAreKeptVerbatim) {
  EXPECT_EQ(name("lib/Foo/bar.cpp.o", "/build"), "lib/Foo/bar.cpp.o");
  EXPECT_EQ(name("a.o", ""), "a.o");
}

TEST(ModuleNaming, EscapesStayInsideTheCorpus) {
  // corpus-format.md X3.
  EXPECT_EQ(name("/abs/build/x.o", "/abs/build"), "x.o");
  EXPECT_EQ(name("/elsewhere/x.o", "/abs/build"), "_abs/elsewhere/x.o");
  EXPECT_EQ(name("../top.o", "/abs/build"), "_up/top.o");
  EXPECT_EQ(name("../../a/b.o", "/x"), "_up/_up/a/b.o");
  EXPECT_EQ(name("./sub/../a.o", "/x"), "a.o");
  EXPECT_EQ(name("/abs/build/../other/y.o", "/abs/build"), "_abs/abs/other/y.o");
}

TEST(ModuleNaming, PathsThatNameNoFileAreErrors) {
  EXPECT_NE(name("", "/x").find("error"), std::string::npos);
  EXPECT_NE(name(".", "/x").find("error"), std::string::npos);
  EXPECT_NE(name("..", "/x").find("error"), std::string::npos);
  EXPECT_NE(name("/", "/x").find("error"), std::string::npos);
}

std::string why(const std::string &name) {
  llvm::Error e = checkModuleName(name);
  return e ? llvm::toString(std::move(e)) : "ok";
}

TEST(ModuleNaming, OneRuleForNamesInsideTheCorpus) {
  EXPECT_EQ(why("a.o"), "ok");
  EXPECT_EQ(why("lib/Foo/bar.cpp.o"), "ok");
  EXPECT_EQ(why("./a.o"), "ok");    // the reference writes such names
  EXPECT_EQ(why("x/../a.o"), "ok"); // normalises to a.o
  EXPECT_EQ(why("..a/b..c"), "ok"); // dots inside a component are plain names
  EXPECT_EQ(why("_up/_abs/x.o"), "ok");
  EXPECT_EQ(why(""), "module name '' is empty");
  EXPECT_EQ(why("/abs/x.o"), "module name '/abs/x.o' is absolute, so it leaves the corpus");
  EXPECT_EQ(why(".."), "module name '..' leaves the corpus");
  EXPECT_EQ(why("../escape"), "module name '../escape' leaves the corpus");
  EXPECT_EQ(why("a/../../escape"), "module name 'a/../../escape' leaves the corpus");
  EXPECT_EQ(why("./../x"), "module name './../x' leaves the corpus");
  EXPECT_EQ(why("."), "module name '.' names the corpus directory itself, not a module");
  EXPECT_EQ(why("a/.."), "module name 'a/..' names the corpus directory itself, not a module");
  EXPECT_EQ(why("a/"), "module name 'a/' names a directory, not a module");
  EXPECT_NE(why(std::string("a\0b", 3)).find("NUL"), std::string::npos);
}

TEST(ModuleNaming, EveryMadeNamePassesTheRule) {
  for (const char *rel : {"a.o", "./a.o", "../a.o", "../../x/y.o", "/elsewhere/x.o", "/abs/build/x.o", "x/../y.o"})
    EXPECT_EQ(why(name(rel, "/abs/build")), "ok") << rel;
}

} // namespace
