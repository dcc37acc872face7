#include "mlgo/extract/InputLoaders.h"

#include "support/TestSupport.h"

using namespace mlgo;
using namespace mlgo::test;

namespace {

std::vector<std::string> rels(const LoadedInput &in) {
  std::vector<std::string> out;
  for (const auto &c : in.Candidates)
    out.push_back(c.Rel);
  return out;
}

TEST(CompileCommands, UpstreamEntries) {
  TempDir dir;
  writeFile(dir / "cc.json", R"([
    {"directory": "/output/directory", "command": "-cc1 -c /some/path/lib/foo/bar.cc -o lib/bar.o"},
    {"directory": "/output/directory",
     "arguments": ["-cc1", "-c", "/some/path/lib/foo/baz.cc", "-o", "lib/other/baz.o"]}
  ])");
  auto in = loadCompileCommands(dir / "cc.json");
  ASSERT_TRUE(static_cast<bool>(in)) << llvm::toString(in.takeError());
  ASSERT_EQ(rels(*in), (std::vector<std::string>{"lib/bar.o", "lib/other/baz.o"}));
  EXPECT_EQ(in->Candidates[0].Base, "/output/directory");
  EXPECT_TRUE(in->Skipped.empty());
}

TEST(CompileCommands, FixedDefectsAndSkippedEntries) {
  TempDir dir;
  writeFile(dir / "cc.json", R"([
    {"directory": "/b", "command": "clang -c 'my dir/a.c' -o \"out dir/a.o\""},
    {"directory": "/b", "command": "clang -c a.c -ob.o"},
    {"directory": "/b", "command": "clang -c a.c --output=c.o"},
    {"directory": "/b", "command": "clang -c a.c", "output": "d.o"},
    {"directory": "/b", "command": "clang -c a.c -o"},
    {"command": "clang -c a.c -o e.o"},
    {"directory": "/b", "file": "f.c"},
    {"directory": "/b", "command": "clang -c a.c"},
    {"directory": "/b", "arguments": ["clang", "-o", "first.o"], "command": "clang -o second.o"},
    {"directory": "/b", "command": "clang 'unterminated"}
  ])");
  auto in = loadCompileCommands(dir / "cc.json");
  ASSERT_TRUE(static_cast<bool>(in)) << llvm::toString(in.takeError());
  EXPECT_EQ(rels(*in), (std::vector<std::string>{"out dir/a.o", "b.o", "c.o", "d.o", "first.o"}));
  std::vector<std::string> reasons;
  for (const auto &s : in->Skipped)
    reasons.push_back(s.Reason);
  EXPECT_EQ(reasons, (std::vector<std::string>{"missing_output_value", "no_directory", "no_command", "no_output_option",
                                               "bad_command"}));
  EXPECT_NE(in->Skipped[1].Origin.find("entry 6"), std::string::npos);
}

TEST(CompileCommands, MalformedJsonNamesFileLineAndColumn) {
  TempDir dir;
  writeFile(dir / "cc.json", "[\n  {\"directory\": \"/b\",\n   \"command\": }\n]");
  auto in = loadCompileCommands(dir / "cc.json");
  ASSERT_FALSE(static_cast<bool>(in));
  std::string message = llvm::toString(in.takeError());
  EXPECT_NE(message.find("cc.json"), std::string::npos) << message;
  EXPECT_NE(message.find("line 3"), std::string::npos) << message;

  writeFile(dir / "obj.json", "{}");
  auto notArray = loadCompileCommands(dir / "obj.json");
  ASSERT_FALSE(static_cast<bool>(notArray));
  EXPECT_NE(llvm::toString(notArray.takeError()).find("array"), std::string::npos);

  auto missing = loadCompileCommands(dir / "nope.json");
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("nope.json"), std::string::npos);
}

TEST(LinkerParams, UpstreamParams) {
  TempDir dir;
  writeFile(dir / "p", "-o\noutput/dir/exe\nlib/obj1.o\nsomelib.a\n-W,blah\nlib/dir/obj2.o\n");
  auto in = loadLinkerParams(dir / "p", "/some/path");
  ASSERT_TRUE(static_cast<bool>(in));
  EXPECT_EQ(rels(*in), (std::vector<std::string>{"lib/obj1.o", "lib/dir/obj2.o"}));
  EXPECT_EQ(in->Candidates[0].Base, "/some/path");
}

TEST(LinkerParams, SpecScenarioE6AndFixes) {
  TempDir dir;
  writeFile(dir / "p", "-o\nprog\nbuild/a.o\nlibfoo.a\n-Wl,x\nbuild/sub/b.o\n  build/c.o  \n\n");
  auto in = loadLinkerParams(dir / "p", "");
  ASSERT_TRUE(static_cast<bool>(in));
  EXPECT_EQ(rels(*in), (std::vector<std::string>{"build/a.o", "build/sub/b.o", "build/c.o"}));

  // D11: -oX spelling, quoted lines, @file expansion (and a cycle is an error).
  writeFile(dir / "inner", "\"with space.o\"\n@" + (dir / "inner2") + "\n");
  writeFile(dir / "inner2", "deep.o\n");
  writeFile(dir / "q", "-oprog\n@" + (dir / "inner") + "\nx.o\nlibz.a\n");
  auto q = loadLinkerParams(dir / "q", "");
  ASSERT_TRUE(static_cast<bool>(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(rels(*q), (std::vector<std::string>{"with space.o", "deep.o", "x.o"}));

  writeFile(dir / "loop", "a.o\n@" + (dir / "loop") + "\n");
  auto loop = loadLinkerParams(dir / "loop", "");
  ASSERT_FALSE(static_cast<bool>(loop));
  EXPECT_NE(llvm::toString(loop.takeError()).find("includes itself"), std::string::npos);
}

TEST(LinkerParams, WithoutOutputEveryOperandButNoFlags) {
  TempDir dir;
  writeFile(dir / "p", "a.o\n-Wl,x\n\nlib.a\n");
  auto in = loadLinkerParams(dir / "p", "");
  ASSERT_TRUE(static_cast<bool>(in));
  EXPECT_EQ(rels(*in), (std::vector<std::string>{"a.o", "lib.a"}));
}

// Found by fuzz/linker_params.cpp (reproducer in fuzz/regressions/linker_params/):
// "@inner.params<NUL>junk" read inner.params, since open() stops at the NUL;
// the origin then named a file that does not exist.
TEST(LinkerParams, NulInAtFileNameIsAnError) {
  TempDir dir;
  writeFile(dir / "inner.params", "inner.o\n");
  writeFile(dir / "p", "a.o\n@" + (dir / "inner.params") + std::string("\0junk", 5) + "\n");
  auto in = loadLinkerParams(dir / "p", "");
  ASSERT_FALSE(static_cast<bool>(in));
  std::string message = llvm::toString(in.takeError());
  EXPECT_NE(message.find("NUL"), std::string::npos) << message;
  EXPECT_NE(message.find((dir / "p") + ":2"), std::string::npos) << message;
}

// A NUL byte in a path (legal in JSON as \u0000, and in a params file) would
// make open() read another file than the one named: the entry is reported.
TEST(InputLoaders, PathsWithNulBytesAreReportedNotOpened) {
  TempDir dir;
  writeFile(dir / "cc.json", R"([
    {"directory": "/src", "arguments": ["clang", "-c", "a.c", "-o", "a.o\u0000.evil"], "file": "a.c"},
    {"directory": "/src\u0000/x", "arguments": ["clang", "-c", "b.c", "-o", "b.o"], "file": "b.c"},
    {"directory": "/src", "arguments": ["clang", "-c", "c.c", "-o", "c.o"], "file": "c.c"}
  ])");
  auto cc = loadCompileCommands(dir / "cc.json");
  ASSERT_TRUE(static_cast<bool>(cc)) << llvm::toString(cc.takeError());
  EXPECT_EQ(rels(*cc), (std::vector<std::string>{"c.o"}));
  ASSERT_EQ(cc->Skipped.size(), 2u);
  for (const SkippedEntry &s : cc->Skipped) {
    EXPECT_EQ(s.Reason, "bad_object_path");
    EXPECT_NE(s.Detail.find("NUL"), std::string::npos) << s.Detail;
  }

  writeFile(dir / "p", std::string("-o\nout\nok.o\nbad.o\0x.o\n", 22));
  auto params = loadLinkerParams(dir / "p", "objs");
  ASSERT_TRUE(static_cast<bool>(params)) << llvm::toString(params.takeError());
  EXPECT_EQ(rels(*params), (std::vector<std::string>{"ok.o"}));
  ASSERT_EQ(params->Skipped.size(), 1u);
  EXPECT_EQ(params->Skipped[0].Reason, "bad_object_path");
  EXPECT_EQ(params->Skipped[0].Origin, (dir / "p") + ":4");

  writeFile(dir / "a.json", R"({"actions": [
    {"mnemonic": "CppLink", "arguments": ["clang", "-o", "bin", "good.o", "bad\u0000.o"]}]})");
  auto aquery = loadBazelAquery(dir / "a.json", "");
  ASSERT_TRUE(static_cast<bool>(aquery)) << llvm::toString(aquery.takeError());
  EXPECT_EQ(rels(*aquery), (std::vector<std::string>{"good.o"}));
  ASSERT_EQ(aquery->Skipped.size(), 1u);
  EXPECT_EQ(aquery->Skipped[0].Reason, "bad_object_path");
}

TEST(BazelAquery, LastCppLinkWins) {
  TempDir dir;
  writeFile(dir / "a.json", R"({"actions": [
    {"mnemonic": "not-link", "arguments": []},
    {"mnemonic": "CppLink", "arguments": ["clang", "-o", "first", "sub/b.o"]},
    {"mnemonic": "CppLink", "arguments": ["clang", "-o", "output_binary", "test1.o", "test2.o", "libx.a"]}
  ]})");
  auto in = loadBazelAquery(dir / "a.json", "/some/path");
  ASSERT_TRUE(static_cast<bool>(in));
  EXPECT_EQ(rels(*in), (std::vector<std::string>{"test1.o", "test2.o"}));
  EXPECT_EQ(in->Candidates[0].Base, "/some/path");

  writeFile(dir / "bad.json", R"({"artifacts": []})");
  auto bad = loadBazelAquery(dir / "bad.json", "");
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("actions"), std::string::npos);
}

// Seen while writing fuzz/aquery.cpp (reproducer in fuzz/regressions/aquery/): a non-string mnemonic threw nlohmann's
// type_error out of the loader and terminated extract-ir. Such an action is
// simply not a CppLink (the reference compares with ==).
TEST(BazelAquery, NonStringMnemonicIsNotALink) {
  TempDir dir;
  writeFile(dir / "a.json", R"({"actions": [
    {"mnemonic": "CppLink", "arguments": ["clang", "-o", "bin", "kept.o"]},
    {"mnemonic": 1, "arguments": ["clang", "-o", "bin", "number.o"]},
    {"mnemonic": null},
    {"mnemonic": ["CppLink"], "arguments": ["clang", "-o", "bin", "list.o"]}
  ]})");
  auto in = loadBazelAquery(dir / "a.json", "");
  ASSERT_TRUE(static_cast<bool>(in)) << llvm::toString(in.takeError());
  EXPECT_EQ(rels(*in), (std::vector<std::string>{"kept.o"}));
}

TEST(ObjectDirectory, SortedPreOrderWalk) {
  TempDir dir;
  for (const char *f : {"z.o", "a.o", "sub/b.o", "sub/deeper/c.o", ".hidden/d.o", "sub/e.O", "x.o.tmp", "b.o/f.o"})
    writeFile(dir / f, "");
  auto in = loadObjectDirectory(dir.path());
  ASSERT_TRUE(static_cast<bool>(in));
  // A directory's matches (including directories named *.o) before its subdirectories'.
  EXPECT_EQ(rels(*in),
            (std::vector<std::string>{"a.o", "b.o", "z.o", ".hidden/d.o", "b.o/f.o", "sub/b.o", "sub/deeper/c.o"}));
  auto missing = loadObjectDirectory(dir / "nope");
  EXPECT_FALSE(static_cast<bool>(missing));
  llvm::consumeError(missing.takeError());
}

TEST(LocalThinLTO, StripsImportSuffix) {
  TempDir dir;
  for (const char *f : {"nest/1.3.import.bc", "nest/2.3.import.bc", "nest/1.thinlto.bc"})
    writeFile(dir / f, "");
  auto in = loadLocalThinLTO(dir.path());
  ASSERT_TRUE(static_cast<bool>(in));
  EXPECT_EQ(rels(*in), (std::vector<std::string>{"nest/1", "nest/2"}));
  EXPECT_EQ(in->Candidates[0].Base, dir.path());
}

} // namespace
