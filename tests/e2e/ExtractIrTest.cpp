// extract-ir end to end: the spec's scenarios (corpus-format.md 7.3) on
// objects built here with the real clang-22, ld.lld-22 and llvm-objcopy-22.
#include "support/Deadline.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <memory>
#include <random>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Tool = tool("extract-ir");
const std::string Clang = MLGO_CLANG;
const std::string Objcopy = MLGO_OBJCOPY;

std::string manifest(bool thinlto, const std::vector<std::string> &modules) {
  std::string text = std::string("{\n  \"has_thinlto\": ") + (thinlto ? "true" : "false") + ",\n  \"modules\": ";
  if (modules.empty())
    return text + "[]\n}";
  text += "[\n";
  for (size_t i = 0; i < modules.size(); ++i)
    text += "    \"" + modules[i] + "\"" + (i + 1 < modules.size() ? ",\n" : "\n");
  return text + "  ]\n}";
}

nlohmann::json report(const std::string &out) {
  return nlohmann::json::parse(readFile(out + "/.mlgo-corpus/extract_ir.report.json"));
}

// reason counts by status, e.g. {"failed:input_missing": 1}
std::map<std::string, int> problems(const std::string &out) {
  std::map<std::string, int> counts;
  nlohmann::json rep = report(out);
  for (const auto &p : rep["problems"])
    ++counts[p["status"].get<std::string>() + ":" + p["reason"].get<std::string>()];
  return counts;
}

std::string dumpSection(const std::string &object, const std::string &section, const TempDir &scratch) {
  std::string file = scratch / "dump";
  mustRun(Objcopy + " --dump-section=" + section + "=" + quote(file) + " " + quote(object) + " /dev/null");
  return readFile(file);
}

// The shared fixture of corpus-format.md 7.3.
class ExtractIr : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Dir = new TempDir();
    std::string d = Dir->path();
    writeFile(d + "/src/a.c", "int helper(int x) { return x * 3; }\nint a(int x) { return helper(x) + 1; }\n");
    writeFile(d + "/src/b.c", "static int sq(int x) { return x * x; }\nint b(int x) { return sq(x) - 2; }\n");
    writeFile(d + "/src/c.S", ".text\n.globl c\nc:\n  ret\n");
    fs::create_directories(d + "/build/sub");
    mustRun(Clang + " -O2 -c -Xclang -fembed-bitcode=all ../src/a.c -o a.o", d + "/build");
    mustRun(Clang + " -Oz -c -Xclang -fembed-bitcode=all ../src/b.c -o sub/b.o", d + "/build");
    mustRun(Clang + " -c ../src/c.S -o c.o", d + "/build");
    std::string b = d + "/build";
    writeFile(d + "/cc.json",
              "[\n"
              "{\"directory\": \"" +
                  b +
                  "\", \"command\": \"clang -O2 -c ../src/a.c -o a.o\"},\n"
                  "{\"directory\": \"" +
                  b +
                  "\", \"arguments\": [\"clang\", \"-Oz\", \"-c\", \"../src/b.c\", \"-o\", \"sub/b.o\"]},\n"
                  "{\"directory\": \"" +
                  b +
                  "\", \"command\": \"clang -c ../src/c.S -o c.o\"},\n"
                  "{\"directory\": \"" +
                  b +
                  "\", \"command\": \"clang -c ../src/m.c -o missing.o\"},\n"
                  "{\"directory\": \"" +
                  b +
                  "\", \"command\": \"clang -c noout.c\"},\n"
                  "{\"directory\": \"" +
                  b +
                  "\", \"file\": \"x.c\"},\n"
                  "{\"directory\": \"" +
                  b +
                  "\", \"command\": \"clang -O2 -c ../src/a.c -o a.o\"}\n"
                  "]\n");
  }
  static void TearDownTestSuite() {
    delete Dir;
    Dir = nullptr;
  }
  static std::string fixture(const std::string &rel) { return *Dir / rel; }

  static TempDir *Dir;
  TempDir Work;
};
TempDir *ExtractIr::Dir = nullptr;

TEST_F(ExtractIr, E1_CompileCommands) {
  std::string out = Work / "out";
  CommandResult r = run(Tool + " --input=" + quote(fixture("cc.json")) + " --output_dir=" + quote(out));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {"a.o", "sub/b.o"}));
  EXPECT_EQ(listTree(out), (std::set<std::string>{"a.o.bc", "a.o.cmd", "corpus_description.json", "sub/", "sub/b.o.bc",
                                                  "sub/b.o.cmd"}));
  // Byte-identical to what the reference's llvm-objcopy --dump-section writes.
  TempDir scratch;
  EXPECT_EQ(readFile(out + "/a.o.bc"), dumpSection(fixture("build/a.o"), ".llvmbc", scratch));
  EXPECT_EQ(readFile(out + "/a.o.cmd"), dumpSection(fixture("build/a.o"), ".llvmcmd", scratch));
  EXPECT_EQ(readFile(out + "/sub/b.o.bc"), dumpSection(fixture("build/sub/b.o"), ".llvmbc", scratch));
  EXPECT_EQ(readFile(out + "/sub/b.o.cmd").rfind(std::string("-cc1\0", 5), 0), 0u);

  EXPECT_NE(r.Err.find("INFO:root:Converted 2 files out of 4"), std::string::npos) << r.Err;
  EXPECT_EQ(problems(out), (std::map<std::string, int>{{"duplicate:duplicate", 1},
                                                       {"failed:bitcode_section_missing", 1},
                                                       {"failed:input_missing", 1},
                                                       {"skipped:no_command", 1},
                                                       {"skipped:no_output_option", 1}}));
  auto rep = report(out);
  EXPECT_EQ(rep["candidates"], 4);
  EXPECT_EQ(rep["totals"]["ok"], 2);
  EXPECT_EQ(run(Tool + " --strict -q --input=" + quote(fixture("cc.json")) + " --output_dir=" + quote(out)).ExitCode,
            3);
}

TEST_F(ExtractIr, E2_E3_CmdFilterLeavesNoOrphansOrEmptyDirs) {
  std::string out = Work / "oz";
  mustRun(Tool + " --input=" + quote(fixture("cc.json")) + " --output_dir=" + quote(out) + " --cmd_filter='^-Oz$'");
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {"sub/b.o"}));
  EXPECT_EQ(problems(out)["filtered:cmd_filter"], 1);
  EXPECT_FALSE(exists(out + "/a.o.cmd"));

  out = Work / "o2";
  mustRun(Tool + " --input=" + quote(fixture("cc.json")) + " --output_dir=" + quote(out) + " --cmd_filter '^-O2$'");
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {"a.o"}));
  EXPECT_EQ(listTree(out), (std::set<std::string>{"a.o.bc", "a.o.cmd", "corpus_description.json"}));
}

TEST_F(ExtractIr, X6_X7_FilterPatternChecks) {
  std::string out = Work / "out";
  CommandResult empty =
      run(Tool + " --input=" + quote(fixture("cc.json")) + " --output_dir=" + quote(out) + " --cmd_filter='^$'");
  EXPECT_EQ(empty.ExitCode, 0);
  EXPECT_NE(empty.Err.find("WARNING:root:--cmd_filter '^$' matches the empty string"), std::string::npos) << empty.Err;
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {}));

  CommandResult bad = run(Tool + " --input=" + quote(fixture("cc.json")) + " --output_dir=" + quote(Work / "bad") +
                          " --cmd_filter='('");
  EXPECT_EQ(bad.ExitCode, 2);
  EXPECT_NE(bad.Err.find("'('"), std::string::npos) << bad.Err;
  EXPECT_FALSE(exists(Work / "bad/corpus_description.json"));

  CommandResult bare =
      run(Tool + " --input=" + quote(fixture("cc.json")) + " --cmd_filter --output_dir=" + quote(Work / "bare"));
  EXPECT_EQ(bare.ExitCode, 0) << bare.Err;
  EXPECT_EQ(readFile(Work / "bare/corpus_description.json"), manifest(false, {"a.o", "sub/b.o"}));
}

// yaml2obj objects whose sections are one byte each, as in the upstream lit test.
void makeYamlObjects(const std::string &dir) {
  std::string yaml = "--- !ELF\nFileHeader:\n  Class: ELFCLASS64\n  Data: ELFDATA2LSB\n  Type: ET_REL\n"
                     "  Machine: EM_X86_64\nSections:\n  - Name: .text\n    Type: SHT_PROGBITS\n"
                     "    Flags: [ SHF_ALLOC, SHF_EXECINSTR ]\n  - Name: .llvmbc\n    Type: SHT_PROGBITS\n"
                     "    Content: '55'\n  - Name: .llvmcmd\n    Type: SHT_PROGBITS\n    Content: 'ff'\n";
  writeFile(dir + "/obj.yaml", yaml);
  fs::create_directories(dir + "/objs");
  mustRun(std::string(MLGO_YAML2OBJ) + " " + quote(dir + "/obj.yaml") + " -o " + quote(dir + "/objs/test1.o"));
  mustRun(std::string(MLGO_YAML2OBJ) + " " + quote(dir + "/obj.yaml") + " -o " + quote(dir + "/objs/test2.o"));
}

TEST_F(ExtractIr, E4_E11_UpstreamYamlFixture) {
  makeYamlObjects(Work.path());
  // The reference keeps the 1-byte sections; so do we with --no_verify_bitcode.
  std::string out = Work / "kept";
  mustRun(Tool + " --input=" + quote(Work / "objs") + " --input_type=directory --output_dir=" + quote(out) +
          " --llvm_objcopy_path=llvm-objcopy --no_verify_bitcode");
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {"test1.o", "test2.o"}));
  EXPECT_EQ(readFile(out + "/test1.o.bc"), "\x55");
  EXPECT_EQ(readFile(out + "/test2.o.cmd"), "\xff");
  std::set<std::string> warnings;
  nlohmann::json rep = report(out);
  for (const auto &w : rep["warnings"])
    warnings.insert(w["warning"].get<std::string>());
  EXPECT_EQ(warnings, (std::set<std::string>{"bc_no_magic", "cmd_not_cc1", "cmd_not_utf8"}));

  // By default a section that is not bitcode is a failure, with its reason.
  out = Work / "checked";
  mustRun(Tool + " --input=" + quote(Work / "objs") + " --input_type=directory --output_dir=" + quote(out));
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {}));
  EXPECT_EQ(problems(out)["failed:invalid_bitcode"], 2);
  EXPECT_EQ(listTree(out), (std::set<std::string>{"corpus_description.json"}));

  // E11: filtering a non-UTF-8 command line does not crash.
  out = Work / "filtered";
  mustRun(Tool + " --input=" + quote(Work / "objs") + " --input_type=directory --output_dir=" + quote(out) +
          " --cmd_filter=x --no_verify_bitcode");
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {}));
  EXPECT_EQ(problems(out)["filtered:cmd_filter"], 2);
  EXPECT_EQ(listTree(out), (std::set<std::string>{"corpus_description.json"}));
}

TEST_F(ExtractIr, E5_DirectoryWithBrokenObjectsLeavesNoOrphans) {
  std::string in = Work / "in";
  fs::create_directories(in + "/dir.o");
  fs::copy_file(fixture("build/a.o"), in + "/good.o");
  mustRun(Objcopy + " --remove-section=.llvmbc " + quote(fixture("build/a.o")) + " " + quote(in + "/onlycmd.o"));
  writeFile(in + "/garbage.o", "this is not an object file\n");
  std::string out = Work / "out";
  CommandResult r = run(Tool + " --input=" + quote(in) + " --input_type=directory --output_dir=" + quote(out));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {"good.o"}));
  EXPECT_EQ(listTree(out), (std::set<std::string>{"corpus_description.json", "good.o.bc", "good.o.cmd"}));
  EXPECT_EQ(problems(out),
            (std::map<std::string, int>{
                {"failed:bitcode_section_missing", 1}, {"failed:input_is_directory", 1}, {"failed:not_an_object", 1}}));
  EXPECT_NE(r.Err.find("Converted 1 files out of 4"), std::string::npos);
}

TEST_F(ExtractIr, TruncatedAndCorruptBitcodeAreRejected) {
  TempDir scratch;
  std::string bitcode = dumpSection(fixture("build/a.o"), ".llvmbc", scratch);
  std::string in = Work / "in";
  fs::create_directories(in);
  auto withBitcode = [&](const std::string &name, const std::string &bytes) {
    writeFile(scratch / "bc", bytes);
    mustRun(Objcopy + " --update-section=.llvmbc=" + quote(scratch / "bc") + " " + quote(fixture("build/a.o")) + " " +
            quote(in + "/" + name));
  };
  withBitcode("truncated.o", bitcode.substr(0, bitcode.size() / 2));
  std::string corrupt = bitcode;
  corrupt[3] ^= 0x01; // the magic
  withBitcode("corrupt.o", corrupt);
  withBitcode("empty.o", "");
  withBitcode("whole.o", bitcode);
  std::string out = Work / "out";
  mustRun(Tool + " --input=" + quote(in) + " --input_type=directory --output_dir=" + quote(out));
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {"whole.o"}));
  EXPECT_EQ(problems(out)["failed:invalid_bitcode"], 3);
}

TEST_F(ExtractIr, E6_LinkerParams) {
  writeFile(Work / "root/params", "-o\nprog\nbuild/a.o\nlibfoo.a\n-Wl,x\nbuild/sub/b.o\n  build/c.o  \n\n");
  fs::create_directories(Work / "root/build/sub");
  fs::copy_file(fixture("build/a.o"), Work / "root/build/a.o");
  fs::copy_file(fixture("build/sub/b.o"), Work / "root/build/sub/b.o");
  fs::copy_file(fixture("build/c.o"), Work / "root/build/c.o");
  // E15 too: a bogus objcopy path is accepted, and the missing output dir is created.
  CommandResult r = run(Tool + " --input=params --input_type=params --output_dir=out/nested "
                               "--llvm_objcopy_path=/nonexistent",
                        Work / "root");
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(Work / "root/out/nested/corpus_description.json"),
            manifest(false, {"build/a.o", "build/sub/b.o"}));
  EXPECT_NE(r.Err.find("Converted 2 files out of 3"), std::string::npos) << r.Err;
}

TEST_F(ExtractIr, E7_BazelAquery) {
  writeFile(Work / "aq.json", R"({"actions": [
    {"mnemonic": "CppCompile", "arguments": ["clang", "-c", "a.c", "-o", "a.o"]},
    {"mnemonic": "CppLink", "arguments": ["clang", "-o", "first", "sub/b.o"]},
    {"mnemonic": "CppLink", "arguments": ["clang", "-o", "second", "a.o", "c.o", "libx.a"]}]})");
  std::string out = Work / "out";
  CommandResult r =
      run(Tool + " --input=" + quote(Work / "aq.json") + " --input_type=bazel_aquery --output_dir=" + quote(out) +
          " --obj_base_dir=" + quote(fixture("build")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {"a.o"}));
  EXPECT_NE(r.Err.find("WARNING:root:"), std::string::npos);
  EXPECT_NE(r.Err.find("found 2 CppLink actions"), std::string::npos) << r.Err;
  EXPECT_NE(r.Err.find("Converted 1 files out of 2"), std::string::npos) << r.Err;
}

TEST_F(ExtractIr, E8_LocalThinLTO) {
  std::string d = Work.path();
  writeFile(d + "/m.c", "int b(int);\nint m(int x) { return b(x) + 1; }\n");
  writeFile(d + "/b.c", "int b(int x) { return x * 7; }\n");
  fs::create_directories(d + "/objs");
  mustRun(Clang + " -flto=thin -O2 -fPIC -c m.c -o objs/m.o", d);
  mustRun(Clang + " -flto=thin -O2 -fPIC -c b.c -o objs/b.o", d);
  mustRun(std::string(MLGO_LLD) + " -shared objs/m.o objs/b.o -o libmb.so --save-temps=import "
                                  "--thinlto-emit-index-files",
          d);
  std::string out = Work / "out";
  CommandResult r = run(Tool + " --thinlto_build=local --obj_base_dir=" + quote(d) + " --output_dir=" + quote(out));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(out + "/corpus_description.json"),
            "{\n  \"global_command_override\": [\n    \"<UNSPECIFIED>\"\n  ],\n  \"has_thinlto\": true,\n"
            "  \"modules\": [\n    \"objs/b.o\",\n    \"objs/m.o\"\n  ]\n}");
  EXPECT_EQ(listTree(out), (std::set<std::string>{"corpus_description.json", "objs/", "objs/b.o.bc",
                                                  "objs/b.o.thinlto.bc", "objs/m.o.bc", "objs/m.o.thinlto.bc"}));
  EXPECT_EQ(readFile(out + "/objs/m.o.bc"), readFile(d + "/objs/m.o.3.import.bc"));
  EXPECT_EQ(readFile(out + "/objs/m.o.thinlto.bc"), readFile(d + "/objs/m.o.thinlto.bc"));

  // E13 / E14: the whole job cannot proceed.
  CommandResult both = run(Tool + " --thinlto_build=local --input=x --output_dir=" + quote(Work / "e13"));
  EXPECT_EQ(both.ExitCode, 1);
  EXPECT_NE(both.Err.find("--thinlto_build=local cannot be run with --input"), std::string::npos);
  CommandResult none = run(Tool + " --output_dir=" + quote(Work / "e14"));
  EXPECT_EQ(none.ExitCode, 1);
  EXPECT_NE(none.Err.find("--input or --thinlto_build=local must be provided"), std::string::npos);
  EXPECT_FALSE(exists(Work / "e13/corpus_description.json"));
}

TEST_F(ExtractIr, E9_E12_DistributedThinLTO) {
  std::string d = Work.path();
  writeFile(d + "/m.c", "int b(int);\nint m(int x) { return b(x) + 1; }\n");
  writeFile(d + "/b.c", "int b(int x) { return x * 7; }\n");
  mustRun(Clang + " -flto=thin -O2 -c m.c -o m.o && " + Clang + " -flto=thin -O2 -c b.c -o b.o", d);
  mustRun(std::string(MLGO_LLD) + " --thinlto-index-only -shared m.o b.o -o libmb.so", d);
  fs::create_directories(d + "/native");
  std::string entries;
  for (const char *m : {"m", "b"}) {
    std::string cmd = Clang + " -O2 -c -x ir " + m + ".o -fthinlto-index=" + m + ".o.thinlto.bc -o native/" + m +
                      ".o -mllvm -lto-embed-bitcode=post-merge-pre-opt";
    mustRun(cmd, d);
    entries +=
        std::string(entries.empty() ? "" : ",\n") + "{\"directory\": \"" + d + "\", \"command\": \"" + cmd + "\"}";
  }
  writeFile(d + "/cc.json", "[\n" + entries + "\n]\n");
  std::string out = Work / "out";
  CommandResult r =
      run(Tool + " --input=" + quote(d + "/cc.json") + " --thinlto_build=distributed --output_dir=" + quote(out));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(true, {"native/m.o", "native/b.o"}));
  EXPECT_EQ(readFile(out + "/native/m.o.thinlto.bc"), readFile(d + "/m.o.thinlto.bc"));
  EXPECT_NE(readFile(out + "/native/b.o.cmd").find("-fthinlto-index=b.o.thinlto.bc"), std::string::npos);

  // E12: objects without an index option are reported one by one.
  std::string plain = Work / "plain";
  CommandResult e12 =
      run(Tool + " --input=" + quote(fixture("cc.json")) + " --thinlto_build=distributed --output_dir=" + quote(plain));
  ASSERT_EQ(e12.ExitCode, 0) << e12.Err;
  EXPECT_EQ(readFile(plain + "/corpus_description.json"), manifest(true, {}));
  EXPECT_EQ(problems(plain)["failed:thinlto_index_option_missing"], 2);
  EXPECT_EQ(listTree(plain), (std::set<std::string>{"corpus_description.json"}));
}

TEST_F(ExtractIr, E10_MachOAndCOFF) {
  std::string d = Work.path();
  writeFile(d + "/a.c", "int a(int x) { return x + 5; }\n");
  fs::create_directories(d + "/macho");
  fs::create_directories(d + "/coff");
  mustRun(Clang + " -target x86_64-apple-macos11 -O2 -c -Xclang -fembed-bitcode=all a.c -o macho/a.o", d);
  mustRun(Clang + " -target x86_64-pc-windows-msvc -O2 -c -Xclang -fembed-bitcode=all a.c -o coff/a.o", d);
  TempDir scratch;

  // Explicit names still work (and win).
  std::string out = Work / "macho-out";
  mustRun(Tool + " --input=" + quote(d + "/macho") + " --input_type=directory --output_dir=" + quote(out) +
          " --bitcode_section_name=__LLVM,__bitcode --cmd_section_name=__LLVM,__cmdline");
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {"a.o"}));
  EXPECT_EQ(readFile(out + "/a.o.bc"), dumpSection(d + "/macho/a.o", "__LLVM,__bitcode", scratch));
  EXPECT_EQ(readFile(out + "/a.o.bc").substr(0, 4), "\xDE\xC0\x17\x0B");

  // Without flags, each format's native names are read.
  std::string native = Work / "macho-native";
  mustRun(Tool + " --input=" + quote(d + "/macho") + " --input_type=directory --output_dir=" + quote(native));
  EXPECT_EQ(readFile(native + "/corpus_description.json"), manifest(false, {"a.o"}));
  EXPECT_EQ(readFile(native + "/a.o.bc"), readFile(out + "/a.o.bc"));
  EXPECT_EQ(readFile(native + "/a.o.cmd"), dumpSection(d + "/macho/a.o", "__LLVM,__cmdline", scratch));

  // An explicit ELF name is applied to Mach-O too, and fails with a hint.
  std::string wrong = Work / "macho-explicit-elf";
  mustRun(Tool + " --input=" + quote(d + "/macho") + " --input_type=directory --output_dir=" + quote(wrong) +
          " --bitcode_section_name=.llvmbc");
  EXPECT_EQ(problems(wrong)["failed:bitcode_section_missing"], 1);
  EXPECT_NE(report(wrong)["problems"][0]["detail"].get<std::string>().find("__LLVM,__bitcode"), std::string::npos);

  out = Work / "coff-out";
  mustRun(Tool + " --input=" + quote(d + "/coff") + " --input_type=directory --output_dir=" + quote(out));
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {"a.o"}));
  EXPECT_EQ(readFile(out + "/a.o.bc"), dumpSection(d + "/coff/a.o", ".llvmbc", scratch));
  EXPECT_EQ(readFile(out + "/a.o.cmd"), dumpSection(d + "/coff/a.o", ".llvmcmd", scratch));

  // A mixed tree (Mach-O, COFF, ELF) in one run, without flags.
  std::string mixed = Work / "mixed-out";
  mustRun(Clang + " -O2 -c -Xclang -fembed-bitcode=all a.c -o elf.o", d);
  mustRun(Tool + " --input=" + quote(d) + " --input_type=directory --output_dir=" + quote(mixed));
  EXPECT_EQ(readFile(mixed + "/corpus_description.json"), manifest(false, {"elf.o", "coff/a.o", "macho/a.o"}));
  EXPECT_EQ(readFile(mixed + "/macho/a.o.bc"), readFile(native + "/a.o.bc"));
  EXPECT_EQ(readFile(mixed + "/coff/a.o.bc"), readFile(out + "/a.o.bc"));
  EXPECT_EQ(readFile(mixed + "/elf.o.cmd"), dumpSection(d + "/elf.o", ".llvmcmd", scratch));
}

TEST_F(ExtractIr, X1_X5_CompileCommandVariants) {
  std::string d = Work.path();
  for (const char *obj : {"out dir/a.o", "b.o", "c.o", "d.o", "e.o", "up.o", "abs.o"}) {
    fs::create_directories(fs::path(d + "/build/" + obj).parent_path());
    fs::copy_file(fixture("build/a.o"), d + "/build/" + obj);
  }
  fs::create_directories(d + "/elsewhere");
  fs::copy_file(fixture("build/a.o"), d + "/elsewhere/x.o");
  std::string b = d + "/build/sub";
  fs::create_directories(b);
  auto entry = [&](const std::string &rest) { return "{\"directory\": \"" + b + "\", " + rest + "}"; };
  writeFile(d + "/cc.json", "[" + entry(R"("command": "clang -c 'my dir/a.c' -o \"../out dir/a.o\"")") + ",\n" +
                                entry(R"("command": "clang -c a.c -o../b.o")") + ",\n" +
                                entry(R"("command": "clang -c a.c --output=../c.o")") + ",\n" +
                                entry(R"("command": "clang -c a.c --output ../d.o")") + ",\n" +
                                entry(R"("command": "clang -c a.c", "output": "../e.o")") + ",\n" +
                                entry(R"("command": "clang -c a.c -o")") + ",\n" +
                                R"({"command": "clang -c a.c -o x.o"})" + ",\n" +
                                entry(R"("command": "clang -c a.c -o )" + d + R"(/elsewhere/x.o")") + ",\n" +
                                entry(R"("command": "clang -c a.c -o )" + b + R"(/../abs.o")") + "]");
  std::string out = Work / "out";
  CommandResult r = run(Tool + " --input=" + quote(d + "/cc.json") + " --output_dir=" + quote(out));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  std::string elsewhere = "_abs" + d + "/elsewhere/x.o";
  std::string absolute = "_abs" + d + "/build/abs.o";
  EXPECT_EQ(readFile(out + "/corpus_description.json"),
            manifest(false, {"_up/out dir/a.o", "_up/b.o", "_up/c.o", "_up/d.o", "_up/e.o", elsewhere, absolute}));
  // Every file stays inside the output directory.
  for (const std::string &name : {std::string("_up/out dir/a.o"), elsewhere, absolute})
    EXPECT_TRUE(exists(out + "/" + name + ".bc")) << name;
  EXPECT_FALSE(exists(d + "/elsewhere/x.o.bc"));
  EXPECT_EQ(problems(out),
            (std::map<std::string, int>{{"skipped:missing_output_value", 1}, {"skipped:no_directory", 1}}));
}

TEST_F(ExtractIr, WholeJobErrors) {
  writeFile(Work / "bad.json", "[\n  {\"directory\": \"/x\",\n   \"command\" \"cc\"}\n]");
  CommandResult r = run(Tool + " --input=" + quote(Work / "bad.json") + " --output_dir=" + quote(Work / "out"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("bad.json"), std::string::npos) << r.Err;
  EXPECT_NE(r.Err.find("line 3"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "out/corpus_description.json"));

  r = run(Tool + " --input=" + quote(Work / "missing.json") + " --output_dir=" + quote(Work / "out"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("missing.json"), std::string::npos) << r.Err;

  writeFile(Work / "file", "");
  r = run(Tool + " --input=" + quote(fixture("cc.json")) + " --output_dir=" + quote(Work / "file"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("cannot create output directory"), std::string::npos) << r.Err;

  EXPECT_EQ(run(Tool + " --input=x").ExitCode, 2); // --output_dir missing
  EXPECT_EQ(run(Tool + " --input=x --output_dir=y --input_type=yaml").ExitCode, 2);
  EXPECT_EQ(run(Tool + " --input=x --output_dir=y --num_workers=0").ExitCode, 2);
  CommandResult help = run(Tool + " --help");
  EXPECT_EQ(help.ExitCode, 0);
  for (const char *flag :
       {"--input", "--input_type", "--output_dir", "--num_workers", "--llvm_objcopy_path", "--obj_base_dir",
        "--cmd_filter", "--thinlto_build", "--cmd_section_name", "--bitcode_section_name", "--verbosity", "--strict",
        "--resume", "--quiet", "--progress_interval", "--no_verify_bitcode"})
    EXPECT_NE(help.Out.find(flag), std::string::npos) << flag;
}

TEST_F(ExtractIr, NonUtf8PathsAndPrefixFlags) {
  std::string in = Work / "in";
  std::string odd = in + "/caf\xe9.o"; // Latin-1 byte: not UTF-8
  fs::create_directories(in);
  fs::copy_file(fixture("build/a.o"), odd);
  std::string out = Work / "out";
  // --out and --input_t are unique prefixes, as argparse allows.
  mustRun(Tool + " --input=" + quote(in) + " --input_t=directory --out=" + quote(out));
  EXPECT_EQ(readFile(out + "/corpus_description.json"), manifest(false, {"caf\\udce9.o"}));
  EXPECT_TRUE(exists(out + "/caf\xe9.o.bc"));
}

// Whether a thread of `pid` waits in open() for the other end of a FIFO.
bool blockedOnFifo(pid_t pid) {
  std::error_code ec;
  fs::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", ec), end;
  for (; !ec && tasks != end; tasks.increment(ec))
    if (readFile(tasks->path().string() + "/wchan").find("partner") != std::string::npos)
      return true;
  return false;
}

// extract-ir in the background, blocked opening a FIFO posing as an object:
// once start() succeeds it has done the modules before the FIFO and waits
// there until the test opens the FIFO's write end. (Opening the write end to
// probe would release it.)
class BlockedRun {
public:
  BlockedRun(std::string fifo) : Fifo(std::move(fifo)) {}
  ::testing::AssertionResult start(const std::string &cc, const std::string &out, const TempDir &scratch) {
    if (::mkfifo(Fifo.c_str(), 0644) != 0)
      return ::testing::AssertionFailure() << "mkfifo " << Fifo << ": " << std::strerror(errno);
    Err = scratch / "extract-ir.err";
    Process = std::make_unique<BackgroundCommand>(
        Tool + " --num_workers=1 --progress_interval=0 --input=" + quote(cc) + " --output_dir=" + quote(out), Err);
    ::testing::AssertionResult reached = waitUntil([&] { return blockedOnFifo(pid()) || Process->exited(); },
                                                   GenerousDeadline, "extract-ir to block opening " + Fifo);
    if (reached && Process->exited())
      return ::testing::AssertionFailure() << "extract-ir ended before it reached " << Fifo << ":\n" << readFile(Err);
    if (!reached)
      reached << "\nits stderr:\n" << readFile(Err);
    return reached;
  }
  pid_t pid() const { return Process->pid(); }
  BackgroundCommand &process() { return *Process; }
  const std::string &fifo() const { return Fifo; }

private:
  std::string Fifo, Err;
  std::unique_ptr<BackgroundCommand> Process; // killed and reaped if the test fails early
};

class ExtractIrResume : public ExtractIr {
protected:
  // 12 objects, with the FIFO in the middle of the compile DB.
  std::string makeDatabase(const std::string &fifoName) {
    std::string d = Work / "objs";
    std::string entries;
    for (int i = 0; i < 12; ++i) {
      std::string name = i == 5 ? fifoName : "m" + std::to_string(i) + ".o";
      if (i != 5) {
        fs::create_directories(d);
        fs::copy_file(fixture(i % 2 ? "build/a.o" : "build/sub/b.o"), d + "/" + name);
      }
      entries += std::string(entries.empty() ? "" : ",\n") + "{\"directory\": \"" + d +
                 "\", \"command\": \"clang -c x.c -o " + name + "\"}";
    }
    writeFile(Work / "cc.json", "[\n" + entries + "\n]\n");
    return d;
  }
};

TEST_F(ExtractIrResume, X8_InterruptThenResumeEqualsCleanRun) {
  std::string d = makeDatabase("m5.o");
  std::string out = Work / "out";
  TempDir scratch;
  BlockedRun blocked(d + "/m5.o");
  ASSERT_TRUE(blocked.start(Work / "cc.json", out, scratch));
  blocked.process().signal(SIGINT);
  // Let the blocked read finish: the FIFO yields garbage, so m5.o fails.
  // Whether the interrupted open is restarted (libLLVM retries on EINTR) or
  // fails (as under ASan's interceptors: m5.o is then not processed), the
  // run ends as interrupted and the resume must equal a clean run.
  int fd = -1;
  ASSERT_TRUE(waitUntil(
      [&] {
        fd = ::open(blocked.fifo().c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        return fd >= 0 || blocked.process().exited();
      },
      GenerousDeadline, "extract-ir to open " + blocked.fifo() + " or to end"));
  if (fd >= 0) {
    ASSERT_EQ(::write(fd, "junk", 4), 4);
    ::close(fd);
  }
  int status = 0;
  ASSERT_TRUE(blocked.process().wait(GenerousDeadline, status));
  EXPECT_EQ(shellExitCode(status), 130);
  EXPECT_FALSE(exists(out + "/corpus_description.json"));
  EXPECT_TRUE(report(out)["interrupted"].get<bool>());
  size_t doneBefore = listTree(out).size();
  EXPECT_LT(doneBefore, 24u);

  // Replace the FIFO with a real object and resume.
  fs::remove(d + "/m5.o");
  fs::copy_file(fixture("build/a.o"), d + "/m5.o");
  CommandResult resumed = run(Tool + " --resume --input=" + quote(Work / "cc.json") + " --output_dir=" + quote(out));
  ASSERT_EQ(resumed.ExitCode, 0) << resumed.Err;
  EXPECT_NE(resumed.Err.find("Resumed: "), std::string::npos) << resumed.Err;
  EXPECT_GT(report(out)["totals"]["resumed"].get<int>(), 0);

  std::string clean = Work / "clean";
  mustRun(Tool + " --input=" + quote(Work / "cc.json") + " --output_dir=" + quote(clean));
  EXPECT_EQ(readFile(out + "/corpus_description.json"), readFile(clean + "/corpus_description.json"));
  EXPECT_EQ(listTree(out), listTree(clean));
  for (const std::string &f : listTree(clean))
    EXPECT_EQ(readFile(out + "/" + f), readFile(clean + "/" + f)) << f;
  EXPECT_EQ(listTree(out + "/.mlgo-corpus", true),
            (std::set<std::string>{"extract_ir.journal", "extract_ir.report.json", "lock"}));
}

TEST_F(ExtractIrResume, KillNineThenRerunEqualsCleanRun) {
  std::string d = makeDatabase("m5.o");
  std::string out = Work / "out";
  TempDir scratch;
  BlockedRun blocked(d + "/m5.o");
  ASSERT_TRUE(blocked.start(Work / "cc.json", out, scratch));
  blocked.process().signal(SIGKILL);
  int status = 0;
  ASSERT_TRUE(blocked.process().wait(GenerousDeadline, status));
  EXPECT_EQ(shellExitCode(status), 128 + SIGKILL);
  fs::remove(d + "/m5.o");
  fs::copy_file(fixture("build/a.o"), d + "/m5.o");
  // No torn module files: every .bc present is one of the complete sources.
  std::set<std::string> sources{dumpSection(fixture("build/a.o"), ".llvmbc", scratch),
                                dumpSection(fixture("build/sub/b.o"), ".llvmbc", scratch)};
  size_t modules = 0;
  for (const std::string &f : listTree(out))
    if (f.ends_with(".bc")) {
      ++modules;
      EXPECT_TRUE(sources.count(readFile(out + "/" + f))) << f;
    }
  EXPECT_GT(modules, 0u);
  EXPECT_LT(modules, 12u);
  for (const char *mode : {"", " --resume"}) {
    std::string rerun = Work / (std::string("rerun") + mode);
    fs::copy(out, rerun, fs::copy_options::recursive);
    mustRun(Tool + mode + " --input=" + quote(Work / "cc.json") + " --output_dir=" + quote(rerun));
    std::string clean = Work / "clean";
    if (!exists(clean))
      mustRun(Tool + " --input=" + quote(Work / "cc.json") + " --output_dir=" + quote(clean));
    EXPECT_EQ(listTree(rerun), listTree(clean)) << mode;
    for (const std::string &f : listTree(clean))
      EXPECT_EQ(readFile(rerun + "/" + f), readFile(clean + "/" + f)) << f << mode;
    // The killed run's staging area is cleaned up.
    EXPECT_EQ(listTree(rerun + "/.mlgo-corpus", true),
              (std::set<std::string>{"extract_ir.journal", "extract_ir.report.json", "lock"}));
  }
}

// Killed (by the MLGO_KILL_BEFORE_RENAME seam) right after each of its
// atomically written files' temporary is written and before its rename: the
// temporary is left, exactly as a kill -9 landing there leaves it, and
// --resume removes it, so the output equals a clean run's (issue #44, finding
// 6: the random kills of KillNineMidWriteThenResumeEqualsCleanRun hit this
// about once in 20). Names that are not extract-ir's own temporaries stay.
TEST_F(ExtractIrResume, KilledBeforeARenameThenResumeRemovesTheTemporary) {
  std::string d = makeDatabase("m5.o");
  fs::copy_file(fixture("build/a.o"), d + "/m5.o");
  std::string command = " --input=" + quote(Work / "cc.json") + " --output_dir=";
  std::string clean = Work / "clean";
  mustRun(Tool + command + quote(clean));
  const std::set<std::string> state{"extract_ir.journal", "extract_ir.report.json", "lock"};
  ASSERT_EQ(listTree(clean + "/.mlgo-corpus", true), state);
  // Where each file is written, in the order a run writes them: the report
  // and the compacted journal in the state directory, the manifest at the top.
  const std::vector<std::pair<std::string, std::string>> files{{".mlgo-corpus", "extract_ir.report.json"},
                                                               {".mlgo-corpus", "extract_ir.journal"},
                                                               {"", "corpus_description.json"}};
  for (const auto &[dir, name] : files) {
    std::string out = Work / ("out-" + name);
    CommandResult killed = run("MLGO_KILL_BEFORE_RENAME=" + name + " " + Tool + command + quote(out));
    ASSERT_EQ(killed.ExitCode, 128 + SIGKILL) << name << ": " << killed.Err;
    std::string where = dir.empty() ? out : out + "/" + dir;
    std::vector<std::string> temporaries;
    for (const std::string &f : listTree(where, true))
      if (f.rfind(name + ".tmp.", 0) == 0)
        temporaries.push_back(f);
    ASSERT_EQ(temporaries.size(), 1u) << name << ": the seam must leave the temporary";
    // Names like a temporary that are not one of extract-ir's own files stay.
    writeFile(out + "/notes.json.tmp.1.2", "the user's\n");
    writeFile(out + "/.mlgo-corpus/make_corpus.report.json.tmp.1.2", "make-corpus's\n");
    // A link named like a dead run's staging directory goes itself, never what it names.
    writeFile(Work / "outside/precious", "not extract-ir's\n");
    fs::create_directory_symlink(Work / "outside", out + "/.mlgo-corpus/staging.999999");

    CommandResult resumed = run(Tool + " --resume" + command + quote(out));
    ASSERT_EQ(resumed.ExitCode, 0) << name << ": " << resumed.Err;
    EXPECT_NE(resumed.Err.find("removed " + where + "/" + temporaries[0] + ", a temporary left by a run that died"),
              std::string::npos)
        << resumed.Err;
    EXPECT_EQ(readFile(out + "/notes.json.tmp.1.2"), "the user's\n");
    EXPECT_EQ(readFile(out + "/.mlgo-corpus/make_corpus.report.json.tmp.1.2"), "make-corpus's\n");
    EXPECT_EQ(readFile(Work / "outside/precious"), "not extract-ir's\n");
    fs::remove(out + "/notes.json.tmp.1.2");
    fs::remove(out + "/.mlgo-corpus/make_corpus.report.json.tmp.1.2");
    EXPECT_EQ(listTree(out + "/.mlgo-corpus", true), state) << name;
    EXPECT_EQ(listTree(out), listTree(clean)) << name;
    for (const std::string &f : listTree(clean))
      EXPECT_EQ(readFile(out + "/" + f), readFile(clean + "/" + f)) << f << " after a kill at " << name;
  }
}

// --resume with options that shape the output differently refuses, naming them.
TEST_F(ExtractIrResume, ResumeRefusesChangedOptions) {
  std::string d = makeDatabase("m5.o");
  fs::copy_file(fixture("build/a.o"), d + "/m5.o");
  std::string out = Work / "out";
  std::string base = Tool + " --input=" + quote(Work / "cc.json") + " --output_dir=" + quote(out);
  mustRun(base);
  std::string journal = readFile(out + "/.mlgo-corpus/extract_ir.journal");
  CommandResult r = run(base + " --resume --cmd_filter=^-O3$");
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("cannot resume from " + out + "/.mlgo-corpus/extract_ir.journal"), std::string::npos) << r.Err;
  EXPECT_NE(r.Err.find("--cmd_filter was null, now \"^-O3$\""), std::string::npos) << r.Err;
  r = run(base + " --resume --no_verify_bitcode --bitcode_section_name=.llvmbc2");
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("--bitcode_section_name was \"\", now \".llvmbc2\""), std::string::npos) << r.Err;
  EXPECT_NE(r.Err.find("--no_verify_bitcode was false, now true"), std::string::npos) << r.Err;
  EXPECT_EQ(readFile(out + "/.mlgo-corpus/extract_ir.journal"), journal);
  r = run(base + " --resume");
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("Resumed: 12 modules"), std::string::npos) << r.Err;
}

// Killed at a random point while workers write modules, many times: no torn
// module, every journaled module complete, and a resumed run equals a clean one.
TEST_F(ExtractIrResume, KillNineMidWriteThenResumeEqualsCleanRun) {
  std::string d = Work / "many";
  fs::create_directories(d);
  std::string entries;
  for (int i = 0; i < 200; ++i) {
    std::string name = "m" + std::to_string(i) + ".o";
    fs::copy_file(fixture(i % 2 ? "build/a.o" : "build/sub/b.o"), d + "/" + name);
    entries += std::string(entries.empty() ? "" : ",\n") + "{\"directory\": \"" + d +
               "\", \"command\": \"clang -c x.c -o " + name + "\"}";
  }
  writeFile(Work / "cc.json", "[\n" + entries + "\n]\n");
  std::string clean = Work / "clean";
  mustRun(Tool + " --input=" + quote(Work / "cc.json") + " --output_dir=" + quote(clean));
  TempDir scratch;
  std::set<std::string> sources{dumpSection(fixture("build/a.o"), ".llvmbc", scratch),
                                dumpSection(fixture("build/sub/b.o"), ".llvmbc", scratch)};
  std::mt19937 random(std::random_device{}());
  for (int round = 0; round < 4; ++round) {
    std::string out = Work / ("out" + std::to_string(round));
    // Each round resumes a directory that already holds a killed run's work.
    for (int kill = 0; kill < 2; ++kill) {
      BackgroundCommand extraction(Tool + " --resume --num_workers=2 --progress_interval=0 --input=" +
                                   quote(Work / "cc.json") + " --output_dir=" + quote(out));
      // Wait for a random number of journal lines (or the end of the run),
      // then kill mid-stream.
      size_t target = std::uniform_int_distribution<size_t>(1, 150)(random);
      auto journalLines = [&] {
        std::string journal = readFile(out + "/.mlgo-corpus/extract_ir.journal");
        return static_cast<size_t>(std::count(journal.begin(), journal.end(), '\n'));
      };
      ASSERT_TRUE(waitUntil([&] { return journalLines() > target || extraction.exited(); }, GenerousDeadline,
                            "more than " + std::to_string(target) + " journal lines", std::chrono::milliseconds(1)));
      extraction.signal(SIGKILL);
      int status = 0;
      ASSERT_TRUE(extraction.wait(GenerousDeadline, status));
      // No torn module: every .bc present is one of the complete sources.
      for (const std::string &f : listTree(out)) {
        if (f.ends_with(".bc")) {
          EXPECT_TRUE(sources.count(readFile(out + "/" + f))) << f << " round " << round;
        }
      }
      // Every module the journal says is ok is complete on disk.
      std::istringstream lines(readFile(out + "/.mlgo-corpus/extract_ir.journal"));
      for (std::string line; std::getline(lines, line);) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.contains("status") || j["status"] != "ok")
          continue;
        std::string name = j["name"];
        EXPECT_TRUE(sources.count(readFile(out + "/" + name + ".bc"))) << name;
        EXPECT_EQ(readFile(out + "/" + name + ".cmd"), readFile(clean + "/" + name + ".cmd")) << name;
      }
    }
    CommandResult resumed = run(Tool + " --resume --input=" + quote(Work / "cc.json") + " --output_dir=" + quote(out));
    ASSERT_EQ(resumed.ExitCode, 0) << resumed.Err;
    EXPECT_EQ(listTree(out), listTree(clean)) << round;
    for (const std::string &f : listTree(clean))
      EXPECT_EQ(readFile(out + "/" + f), readFile(clean + "/" + f)) << f << " round " << round;
    EXPECT_EQ(listTree(out + "/.mlgo-corpus", true),
              (std::set<std::string>{"extract_ir.journal", "extract_ir.report.json", "lock"}));
  }
}

} // namespace

namespace {

TEST_F(ExtractIr, OutputsMatchTheirSchemas) {
  std::string out = Work / "out";
  mustRun(Tool + " --input=" + quote(fixture("cc.json")) + " --output_dir=" + quote(out) + " --cmd_filter=-O2");
  std::string formats = std::string(MLGO_SOURCE_DIR) + "/corpus_formats/";
  std::string check = "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " ";
  mustRun(check + quote(formats + "corpus_description.schema.json") + " " + quote(out + "/corpus_description.json"));
  mustRun(check + quote(formats + "extraction_report.schema.json") + " " +
          quote(out + "/.mlgo-corpus/extract_ir.report.json"));
  mustRun(check + "--lines " + quote(formats + "extraction_journal.schema.json") + " " +
          quote(out + "/.mlgo-corpus/extract_ir.journal"));
  // The schema is not vacuous: a report with an unknown reason fails it.
  std::string broken = readFile(out + "/.mlgo-corpus/extract_ir.report.json");
  const std::string reason = "\"reason\": \"input_missing\"";
  ASSERT_NE(broken.find(reason), std::string::npos);
  broken.replace(broken.find(reason), reason.size(), "\"reason\": \"made_up\"");
  writeFile(Work / "broken.json", broken);
  EXPECT_NE(run(check + quote(formats + "extraction_report.schema.json") + " " + quote(Work / "broken.json")).ExitCode,
            0);
}

} // namespace
