// make-corpus, combine-training-corpus, validate-corpus and extract-ir's
// archive support, end to end (corpus-format.md M1-M2, C1-C5).
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sys/stat.h>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Clang = MLGO_CLANG;

class CorpusTools : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixtures = new TempDir();
    writeFile(*Fixtures / "a.c", "int a(int x) { return x + 1; }\n");
    writeFile(*Fixtures / "b.c", "int b(int x) { return x * 2; }\n");
    mustRun(Clang + " -O2 -c -emit-llvm a.c -o a.bc && " + Clang + " -O2 -c -emit-llvm b.c -o b.bc", Fixtures->path());
  }
  static void TearDownTestSuite() { delete Fixtures; }
  static std::string bitcode(const char *name) { return readFile(*Fixtures / name); }

  static TempDir *Fixtures;
  TempDir Work;
};
TempDir *CorpusTools::Fixtures = nullptr;

TEST_F(CorpusTools, M1_MakeCorpusPicksNamesAndOverride) {
  std::string in = Work / "in";
  for (const char *f : {"x.bc", "nested/y.bc", "z.BC", ".dot.bc", "\xc3\xa9.bc"})
    writeFile(in + "/" + f, bitcode("a.bc"));
  writeFile(in + "/nested/y.thinlto.bc", "summary index bytes");
  fs::create_directories(in + "/dir.bc");
  ::chmod((in + "/x.bc").c_str(), 0600);
  std::string out = Work / "out";
  CommandResult r = run(tool("make-corpus") + " --input_dir=" + quote(in) + " --output_dir=" + quote(out) +
                        " --default_args='-O2  -mllvm\t-x'");
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(out + "/corpus_description.json"),
            "{\n  \"global_command_override\": [\n    \"-O2\",\n    \"-mllvm\",\n    \"-x\"\n  ],\n"
            "  \"has_thinlto\": false,\n  \"modules\": [\n    \".dot\",\n    \"x\",\n    \"\\u00e9\",\n"
            "    \"nested/y\"\n  ]\n}");
  EXPECT_EQ(listTree(out), (std::set<std::string>{".dot.bc", "corpus_description.json", "nested/", "nested/y.bc",
                                                  "x.bc", "\xc3\xa9.bc"}));
  EXPECT_EQ(readFile(out + "/nested/y.bc"), bitcode("a.bc"));
  struct stat st;
  ASSERT_EQ(::stat((out + "/x.bc").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u); // permission bits copied, like shutil.copy
  EXPECT_NE(r.Err.find("WARNING:root:make-corpus cannot tell"), std::string::npos);
}

TEST_F(CorpusTools, M2_EmptyInput) {
  fs::create_directories(Work / "in");
  fs::create_directories(Work / "out");
  mustRun(tool("make-corpus") + " --input_dir=" + quote(Work / "in") + " --output_dir=" + quote(Work / "out"));
  std::string manifest = readFile(Work / "out/corpus_description.json");
  EXPECT_EQ(manifest, "{\n  \"global_command_override\": [],\n  \"has_thinlto\": false,\n  \"modules\": []\n}");
  EXPECT_EQ(manifest.size(), 76u);
}

TEST_F(CorpusTools, MakeCorpusReportsInvalidBitcodeInsteadOfCopying) {
  std::string in = Work / "in";
  writeFile(in + "/good.bc", bitcode("a.bc"));
  writeFile(in + "/empty.bc", "");
  writeFile(in + "/text.bc", "not bitcode");
  std::string out = Work / "out";
  CommandResult r = run(tool("make-corpus") + " --input_dir=" + quote(in) + " --output_dir=" + quote(out));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(readFile(out + "/corpus_description.json").find("\"modules\": [\n    \"good\"\n  ]"), std::string::npos);
  EXPECT_EQ(listTree(out), (std::set<std::string>{"corpus_description.json", "good.bc"}));
  auto report = nlohmann::json::parse(readFile(out + "/.mlgo-corpus/make_corpus.report.json"));
  EXPECT_EQ(report["reasons"]["invalid_bitcode"], 2);
  EXPECT_NE(r.Err.find("Not copied: failed 2 (invalid_bitcode 2)"), std::string::npos) << r.Err;
  EXPECT_EQ(run(tool("make-corpus") + " --strict -q --input_dir=" + quote(in) + " --output_dir=" + quote(out)).ExitCode,
            3);
  // The reference's behaviour on request: everything copied.
  std::string kept = Work / "kept";
  mustRun(tool("make-corpus") + " --no_verify_bitcode --input_dir=" + quote(in) + " --output_dir=" + quote(kept));
  EXPECT_EQ(listTree(kept), (std::set<std::string>{"corpus_description.json", "empty.bc", "good.bc", "text.bc"}));
  // Copying a directory onto itself is a manifest-only run.
  mustRun(tool("make-corpus") + " --input_dir=" + quote(in) + " --output_dir=" + quote(in));
  EXPECT_EQ(readFile(in + "/good.bc"), bitcode("a.bc"));
  EXPECT_NE(readFile(in + "/corpus_description.json").find("\"good\""), std::string::npos);
}

std::string subCorpus(const std::string &fields, const std::vector<std::string> &modules) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse("{" + fields + "}");
  j["modules"] = modules;
  return j.dump();
}

TEST_F(CorpusTools, C1_C3_C4_CombineIsSortedAndSkipsNonCorpora) {
  std::string root = Work / "root";
  writeFile(root + "/s2/corpus_description.json", subCorpus("\"has_thinlto\": false", {"test2.o", "d/t3.o"}));
  writeFile(root + "/s1/corpus_description.json", subCorpus("\"has_thinlto\": false", {"test1.o"}));
  writeFile(root + "/.hid/corpus_description.json", subCorpus("\"has_thinlto\": true", {"h.o"}));
  writeFile(root + "/s1/deeper/corpus_description.json", subCorpus("\"has_thinlto\": true", {"deep.o"}));
  writeFile(root + "/empty.log", "");
  fs::create_directories(root + "/emptydir");
  CommandResult r = run(tool("combine-training-corpus") + " --root_dir=" + quote(root));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(root + "/corpus_description.json"),
            "{\n  \"has_thinlto\": false,\n  \"modules\": [\n    \"s1/test1.o\",\n    \"s2/test2.o\",\n"
            "    \"s2/d/t3.o\"\n  ]\n}");
  EXPECT_NE(r.Err.find("skipping hidden directory"), std::string::npos) << r.Err;
  // C4: an empty root gives the 19-byte manifest.
  fs::create_directories(Work / "empty");
  mustRun(tool("combine_training_corpus") + " --root_dir=" + quote(Work / "empty"));
  EXPECT_EQ(readFile(Work / "empty/corpus_description.json"), "{\n  \"modules\": []\n}");
}

TEST_F(CorpusTools, C2_C5_MismatchIsAnErrorWhateverTheOrder) {
  for (auto [first, second] : {std::pair<std::string, std::string>{"", "\"has_thinlto\": false"},
                               {"\"has_thinlto\": false", ""},
                               {"\"has_thinlto\": false", "\"has_thinlto\": true"}}) {
    TempDir root;
    writeFile(root / "s1/corpus_description.json", subCorpus(first, {"a"}));
    writeFile(root / "s2/corpus_description.json", subCorpus(second, {"b"}));
    writeFile(root / "corpus_description.json", "previous");
    CommandResult r = run(tool("combine-training-corpus") + " --root_dir=" + quote(root.path()));
    EXPECT_EQ(r.ExitCode, 1) << first << " / " << second;
    EXPECT_NE(r.Err.find("differ by more than modules"), std::string::npos) << r.Err;
    EXPECT_NE(r.Err.find("s1/corpus_description.json"), std::string::npos) << r.Err;
    EXPECT_NE(r.Err.find("s2/corpus_description.json"), std::string::npos) << r.Err;
    EXPECT_EQ(readFile(root / "corpus_description.json"), "previous"); // left as it was
  }
  // Key order does not matter; the first sub-corpus's order is kept.
  TempDir root;
  writeFile(root / "s1/corpus_description.json",
            subCorpus("\"has_thinlto\": false, \"global_command_override\": [\"-O2\"]", {"a"}));
  writeFile(root / "s2/corpus_description.json",
            subCorpus("\"global_command_override\": [\"-O2\"], \"has_thinlto\": false", {"b"}));
  mustRun(tool("combine-training-corpus") + " --root_dir=" + quote(root.path()));
  EXPECT_EQ(readFile(root / "corpus_description.json"),
            "{\n  \"has_thinlto\": false,\n  \"global_command_override\": [\n    \"-O2\"\n  ],\n"
            "  \"modules\": [\n    \"s1/a\",\n    \"s2/b\"\n  ]\n}");
}

TEST_F(CorpusTools, CombineRefusesModulesThatCollideOrEscape) {
  TempDir root;
  writeFile(root / "s1/corpus_description.json", subCorpus("\"has_thinlto\": false", {"x/../a", "a"}));
  CommandResult r = run(tool("combine-training-corpus") + " --root_dir=" + quote(root.path()));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("maps to the same path"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(root / "corpus_description.json"));
  writeFile(root / "s1/corpus_description.json", subCorpus("\"has_thinlto\": false", {"../s2/b"}));
  r = run(tool("combine-training-corpus") + " --root_dir=" + quote(root.path()));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("does not stay inside"), std::string::npos) << r.Err;
  writeFile(root / "s1/corpus_description.json", "{\"has_thinlto\": false}");
  r = run(tool("combine-training-corpus") + " --root_dir=" + quote(root.path()));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("no \"modules\" key"), std::string::npos) << r.Err;
  EXPECT_EQ(run(tool("combine-training-corpus")).ExitCode, 2);
}

TEST_F(CorpusTools, ExtractThenCombineThenValidate) {
  // Two extract-ir corpora, combined, are a sound corpus; breaking it is caught.
  for (const char *sub : {"s1", "s2"}) {
    std::string obj = Work / (std::string("objs/") + sub + "/m.o");
    compileC(std::string("int f_") + sub + "(int x) { return x + 3; }\n", obj);
    mustRun(tool("extract-ir") + " -q --input_type=directory --input=" + quote(Work / (std::string("objs/") + sub)) +
            " --output_dir=" + quote(Work / (std::string("root/") + sub)));
  }
  mustRun(tool("combine-training-corpus") + " --root_dir=" + quote(Work / "root"));
  CommandResult ok = run(tool("validate-corpus") + " " + quote(Work / "root"));
  EXPECT_EQ(ok.ExitCode, 0) << ok.Out;
  EXPECT_NE(ok.Out.find("modules: 2"), std::string::npos) << ok.Out;
  EXPECT_NE(ok.Out.find("result: sound"), std::string::npos) << ok.Out;

  std::string schema = std::string(MLGO_SOURCE_DIR) + "/corpus_formats/validate_corpus.schema.json";
  std::string check = "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " ";
  writeFile(Work / "ok.json", run(tool("validate-corpus") + " --json " + quote(Work / "root")).Out);
  mustRun(check + quote(schema) + " " + quote(Work / "ok.json"));

  ::unlink((Work / "root/s2/m.o.cmd").c_str());
  CommandResult bad = run(tool("validate-corpus") + " --json " + quote(Work / "root"));
  EXPECT_EQ(bad.ExitCode, 1);
  auto json = nlohmann::json::parse(bad.Out);
  EXPECT_FALSE(json["sound"].get<bool>());
  EXPECT_EQ(json["problems"][0]["code"], "missing_cmd");
  EXPECT_EQ(json["problems"][0]["module"], "s2/m.o");
  writeFile(Work / "bad.json", bad.Out);
  mustRun(check + quote(schema) + " " + quote(Work / "bad.json"));
  EXPECT_EQ(run(tool("validate-corpus") + " " + quote(Work / "nowhere")).ExitCode, 1);
  EXPECT_EQ(run(tool("validate-corpus")).ExitCode, 2);
}

TEST_F(CorpusTools, ExtractIrReadsArchives) {
  std::string objs = Work / "objs";
  compileC("int one(int x) { return x + 1; }\n", objs + "/one.o");
  compileC("int two(int x) { return x + 2; }\n", objs + "/two.o");
  compileC("int dup(int x) { return x + 3; }\n", objs + "/other/one.o");
  writeFile(objs + "/asm.S", ".text\n.globl f\nf:\n  ret\n");
  mustRun(Clang + " -c asm.S -o asm.o", objs);
  std::string in = Work / "in";
  fs::create_directories(in + "/lib");
  std::string ar = MLGO_LLVM_AR;
  mustRun(ar + " rc " + quote(in + "/lib/libfoo.a") + " one.o two.o asm.o other/one.o", objs);
  mustRun(ar + " rc --thin " + quote(in + "/libthin.a") + " " + quote(objs + "/two.o"), objs);
  std::string out = Work / "out";
  CommandResult r =
      run(tool("extract-ir") + " --input_type=directory --input=" + quote(in) + " --output_dir=" + quote(out));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(out + "/corpus_description.json"),
            "{\n  \"has_thinlto\": false,\n  \"modules\": [\n    \"libthin.a/two.o\",\n    \"lib/libfoo.a/one.o\",\n"
            "    \"lib/libfoo.a/two.o\",\n    \"lib/libfoo.a/one.o@2\"\n  ]\n}");
  TempDir scratch;
  mustRun(std::string(MLGO_OBJCOPY) + " --dump-section=.llvmbc=" + quote(scratch / "two.bc") + " " +
          quote(objs + "/two.o") + " /dev/null");
  EXPECT_EQ(readFile(out + "/lib/libfoo.a/two.o.bc"), readFile(scratch / "two.bc"));
  EXPECT_EQ(readFile(out + "/libthin.a/two.o.bc"), readFile(scratch / "two.bc"));
  auto report = nlohmann::json::parse(readFile(out + "/.mlgo-corpus/extract_ir.report.json"));
  ASSERT_EQ(report["problems"].size(), 1u);
  EXPECT_EQ(report["problems"][0]["member"], "asm.o");
  EXPECT_EQ(report["problems"][0]["reason"], "bitcode_section_missing");

  // Resume reuses a whole archive.
  mustRun(tool("extract-ir") + " --resume --input_type=directory --input=" + quote(in) + " --output_dir=" + quote(out));
  auto again = nlohmann::json::parse(readFile(out + "/.mlgo-corpus/extract_ir.report.json"));
  EXPECT_EQ(again["totals"]["resumed"], 1); // libthin.a; libfoo.a had a failed member and is redone
  EXPECT_EQ(again["totals"]["ok"], 4);
}

} // namespace
