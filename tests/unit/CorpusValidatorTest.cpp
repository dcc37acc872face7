// One test per validate-corpus rule, each on a corpus broken in exactly
// that way. Bitcode comes from the real clang-22.
#include "mlgo/corpus/CorpusValidator.h"

#include "support/TestSupport.h"

using namespace mlgo;
using namespace mlgo::test;

namespace {

class CorpusValidator : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Bitcode = new std::string[2];
    TempDir dir;
    writeFile(dir / "a.c", "int a(int x) { return x + 1; }\n");
    writeFile(dir / "b.c", "int b(int x) { return x * 2; }\n");
    mustRun(std::string(MLGO_CLANG) + " -O2 -c -emit-llvm a.c -o a.bc && " + MLGO_CLANG +
                " -O2 -c -emit-llvm b.c -o b.bc",
            dir.path());
    Bitcode[0] = readFile(dir / "a.bc");
    Bitcode[1] = readFile(dir / "b.bc");
  }
  static void TearDownTestSuite() { delete[] Bitcode; }

  // A sound corpus: two modules with .bc and .cmd.
  void makeSound(bool thinlto = false) {
    std::string cmd = std::string("-cc1\0-O2\0", 9);
    if (thinlto)
      cmd += std::string("-fthinlto-index=x.thinlto.bc\0", 29);
    writeFile(Dir / "corpus_description.json", std::string("{\n  \"has_thinlto\": ") + (thinlto ? "true" : "false") +
                                                   ",\n  \"modules\": [\n    \"a\",\n    \"sub/b\"\n  ]\n}");
    for (auto [name, i] : {std::pair<const char *, int>{"a", 0}, {"sub/b", 1}}) {
      writeFile(Dir / (std::string(name) + ".bc"), Bitcode[i]);
      writeFile(Dir / (std::string(name) + ".cmd"), cmd);
      if (thinlto)
        writeFile(Dir / (std::string(name) + ".thinlto.bc"), "index");
    }
  }
  std::vector<std::string> codes() {
    std::vector<std::string> out;
    for (const CorpusProblem &p : validateCorpus(Dir.path()).Problems)
      out.push_back(p.Code + (p.Module.empty() ? "" : ":" + p.Module));
    return out;
  }
  using Codes = std::vector<std::string>;

  static std::string *Bitcode;
  TempDir Dir;
};
std::string *CorpusValidator::Bitcode = nullptr;

TEST_F(CorpusValidator, SoundCorpusReportsFacts) {
  makeSound();
  CorpusValidation v = validateCorpus(Dir.path());
  EXPECT_TRUE(v.sound()) << v.toText(true);
  ASSERT_EQ(v.Modules.size(), 2u);
  EXPECT_EQ(v.Modules[0].Name, "a");
  EXPECT_EQ(v.Modules[0].BitcodeSize, Bitcode[0].size());
  EXPECT_EQ(v.Modules[0].Producer.rfind("LLVM22", 0), 0u) << v.Modules[0].Producer;
  EXPECT_EQ(v.Modules[0].Triple, "x86_64-pc-linux-gnu");
  EXPECT_TRUE(v.Duplicates.empty());
  auto json = v.toJson();
  EXPECT_EQ(json["totals"]["bitcode_bytes"], Bitcode[0].size() + Bitcode[1].size());
}

TEST_F(CorpusValidator, UnreadableDescription) {
  EXPECT_EQ(codes(), Codes{"description_invalid"});
  writeFile(Dir / "corpus_description.json", "{\"modules\": [");
  EXPECT_EQ(codes(), Codes{"description_invalid"});
}

TEST_F(CorpusValidator, MissingHasThinLTO) {
  makeSound();
  writeFile(Dir / "corpus_description.json", "{\"modules\": [\"a\", \"sub/b\"]}");
  EXPECT_EQ(codes(), Codes{"has_thinlto_missing"});
}

TEST_F(CorpusValidator, EmptyModules) {
  writeFile(Dir / "corpus_description.json", "{\"has_thinlto\": false, \"modules\": []}");
  EXPECT_EQ(codes(), Codes{"modules_empty"});
}

TEST_F(CorpusValidator, UnspecifiedOverride) {
  makeSound();
  writeFile(
      Dir / "corpus_description.json",
      "{\"global_command_override\": [\"<UNSPECIFIED>\"], \"has_thinlto\": false, \"modules\": [\"a\", \"sub/b\"]}");
  EXPECT_EQ(codes(), Codes{"override_unspecified"});
}

TEST_F(CorpusValidator, OverrideMakesCmdOptional) {
  makeSound();
  ::unlink((Dir / "a.cmd").c_str());
  ::unlink((Dir / "sub/b.cmd").c_str());
  writeFile(Dir / "corpus_description.json",
            "{\"global_command_override\": [\"-O2\"], \"has_thinlto\": false, \"modules\": [\"a\", \"sub/b\"]}");
  EXPECT_EQ(codes(), Codes{});
}

TEST_F(CorpusValidator, CmdOrOverrideThatLoadsCodeOrWritesFilesIsUnsafe) {
  makeSound();
  writeFile(Dir / "a.cmd", std::string("-cc1\0-O2\0-load\0/tmp/evil.so\0", 28));
  writeFile(Dir / "sub/b.cmd", std::string("-cc1\0-dependency-file\0b.d\0-O2\0", 30)); // dropped, not unsafe
  EXPECT_EQ(codes(), Codes{"unsafe_command_line:a"});
  auto problems = validateCorpus(Dir.path()).Problems;
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].Detail.find("-load /tmp/evil.so"), std::string::npos) << problems[0].Detail;

  writeFile(Dir / "corpus_description.json", "{\"global_command_override\": [\"-O2\", \"-Xclang\", "
                                             "\"-stats-file=/home/u/x\"], \"has_thinlto\": false, "
                                             "\"modules\": [\"a\", \"sub/b\"]}");
  problems = validateCorpus(Dir.path()).Problems;
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].Code, "unsafe_command_line");
  EXPECT_EQ(problems[0].Module, "");
  EXPECT_NE(problems[0].Detail.find("-stats-file="), std::string::npos) << problems[0].Detail;
}

TEST_F(CorpusValidator, BadAndDuplicateNames) {
  makeSound();
  writeFile(Dir / "corpus_description.json",
            "{\"has_thinlto\": false, \"modules\": [\"a\", \"sub/b\", \"a\", \"../up\", \"x.bc\"]}");
  EXPECT_EQ(codes(), (Codes{"duplicate_module_name:a", "bad_module_name:../up", "bad_module_name:x.bc"}));
}

TEST_F(CorpusValidator, MissingBitcode) {
  makeSound();
  ::unlink((Dir / "sub/b.bc").c_str());
  EXPECT_EQ(codes(), Codes{"missing_bc:sub/b"});
}

TEST_F(CorpusValidator, InvalidBitcode) {
  makeSound();
  writeFile(Dir / "a.bc", Bitcode[0].substr(0, Bitcode[0].size() / 3));
  EXPECT_EQ(codes(), Codes{"invalid_bitcode:a"});
}

TEST_F(CorpusValidator, MissingCmd) {
  makeSound();
  ::unlink((Dir / "a.cmd").c_str());
  EXPECT_EQ(codes(), Codes{"missing_cmd:a"});
}

TEST_F(CorpusValidator, CmdNotNulSeparated) {
  makeSound();
  writeFile(Dir / "a.cmd", "-cc1 -O2\n");
  // harvest-logs would run it (as one driver argument, '-cc1 -O2\n'): screened too.
  EXPECT_EQ(codes(), (Codes{"cmd_not_nul_separated:a", "cmd_not_cc1:a", "unsafe_command_line:a"}));
}

TEST_F(CorpusValidator, CmdNotCc1) {
  makeSound();
  writeFile(Dir / "a.cmd", std::string("clang\0-O2\0", 10));
  // 'clang' would be a second input file to the compile harvest-logs runs.
  EXPECT_EQ(codes(), (Codes{"cmd_not_cc1:a", "unsafe_command_line:a"}));
  writeFile(Dir / "a.cmd", std::string("-O2\0", 4));
  EXPECT_EQ(codes(), Codes{"cmd_not_cc1:a"}) << "a driver line whose cc1 job is safe";
}

// Issue 33 #2: validate-corpus screens the line harvest-logs would run, a
// driver line as its cc1 job, with the same verdict.
TEST_F(CorpusValidator, DriverLinesAreScreenedAsTheCc1JobTheyMake) {
  makeSound();
  for (std::string line :
       {std::string("-O2\0--config=/tmp/evil.cfg\0", 27),
        std::string("-O2\0-mllvm\0-exec-on-ir-change=/tmp/evil\0", 40),
        std::string("-O2\0-isystem\0@/tmp/evil.rsp\0", 28), std::string("-O2\0-fno-integrated-as\0", 23)}) {
    writeFile(Dir / "a.cmd", line);
    EXPECT_EQ(codes(), (Codes{"cmd_not_cc1:a", "unsafe_command_line:a"})) << line;
  }
}

TEST_F(CorpusValidator, CmdNotUtf8) {
  makeSound();
  writeFile(Dir / "a.cmd", std::string("-cc1\0\xff\0", 7));
  EXPECT_EQ(codes(), (Codes{"cmd_not_utf8:a", "unsafe_command_line:a"}));
}

TEST_F(CorpusValidator, ThinLTOIndexFileAndOption) {
  makeSound(/*thinlto=*/true);
  EXPECT_EQ(codes(), Codes{});
  ::unlink((Dir / "a.thinlto.bc").c_str());
  writeFile(Dir / "sub/b.cmd", std::string("-cc1\0-O2\0", 9));
  EXPECT_EQ(codes(), (Codes{"missing_thinlto:a", "cmd_thinlto_index:sub/b"}));
}

TEST_F(CorpusValidator, StrayFiles) {
  makeSound();
  writeFile(Dir / "old.bc", Bitcode[0]);
  writeFile(Dir / "sub/c.cmd", "x");
  writeFile(Dir / ".mlgo-corpus/staging.1/x.bc", "ignored: tool state");
  EXPECT_EQ(codes(), (Codes{"stray_file", "stray_file"}));
}

TEST_F(CorpusValidator, DuplicateContentIsListedNotAProblem) {
  makeSound();
  writeFile(Dir / "sub/b.bc", Bitcode[0]);
  CorpusValidation v = validateCorpus(Dir.path());
  EXPECT_TRUE(v.sound());
  ASSERT_EQ(v.Duplicates.size(), 1u);
  EXPECT_EQ(v.Duplicates[0], (std::vector<std::string>{"a", "sub/b"}));
}

} // namespace
