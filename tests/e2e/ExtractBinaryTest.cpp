// extract-ir on linked binaries: executables and shared libraries linked here
// with clang-22 and ld.lld-22 (and GNU ld), from C and C++ objects built with
// -fembed-bitcode=all; each object's module comes back byte for byte.
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Tool = tool("extract-ir");
const std::string Clang = MLGO_CLANG;
const std::string ClangXX = Clang + " --driver-mode=g++";
const std::string Lld = MLGO_LLD;
const std::string Objcopy = MLGO_OBJCOPY;

std::string section(const std::string &object, const std::string &name, const TempDir &scratch) {
  std::string file = scratch / "dump";
  mustRun(Objcopy + " --dump-section=" + name + "=" + quote(file) + " " + quote(object) + " /dev/null");
  return readFile(file);
}

std::vector<std::string> modules(const std::string &out) {
  return nlohmann::json::parse(readFile(out + "/corpus_description.json"))["modules"].get<std::vector<std::string>>();
}

std::map<std::string, int> problems(const std::string &out) {
  std::map<std::string, int> counts;
  nlohmann::json rep = nlohmann::json::parse(readFile(out + "/.mlgo-corpus/extract_ir.report.json"));
  for (const auto &p : rep["problems"])
    ++counts[p["status"].get<std::string>() + ":" + p["reason"].get<std::string>()];
  return counts;
}

class ExtractBinary : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Dir = new TempDir();
    std::string d = Dir->path();
    writeFile(d + "/src/main.c", "int util(int);\nint other(int);\nint main(int c, char **v) { return util(c) + "
                                 "other(c); }\n");
    writeFile(d + "/src/util.c", "static int twice(int x) { return 2 * x; }\nint util(int x) { return twice(x); }\n");
    writeFile(d + "/src/sub/util.c", "int other(int x) { return x - 1; }\n");
    writeFile(d + "/src/vec.cpp", "#include <vector>\nint vsum(int n) { std::vector<int> v(n, 1); int s = 0;\n"
                                  "  for (int x : v) s += x; return s; }\n");
    writeFile(d + "/src/api.cpp", "int vsum(int);\nextern \"C\" int api(int n) { return vsum(n) * 2; }\n");
    fs::create_directories(d + "/obj/sub");
    fs::create_directories(d + "/bin");
    std::string embed = " -O2 -fPIC -c -Xclang -fembed-bitcode=all ";
    mustRun(Clang + embed + "src/main.c -o obj/main.o", d);
    mustRun(Clang + embed + "src/util.c -o obj/util.o", d);
    mustRun(Clang + embed + "src/sub/util.c -o obj/sub/util.o", d);
    mustRun(ClangXX + embed + "src/vec.cpp -o obj/vec.o", d);
    mustRun(ClangXX + embed + "src/api.cpp -o obj/api.o", d);
    std::string cObjects = " obj/main.o obj/util.o obj/sub/util.o";
    mustRun(Clang + " -fuse-ld=lld --ld-path=" + Lld + cObjects + " -o bin/prog", d);
    mustRun(Clang + " -fuse-ld=bfd" + cObjects + " -o bin/prog-gnu", d);
    mustRun(ClangXX + " -shared -fuse-ld=lld --ld-path=" + Lld + " obj/vec.o obj/api.o -o bin/libapi.so", d);
    mustRun(ClangXX + " -shared -fuse-ld=bfd obj/vec.o obj/api.o -o bin/libapi-gnu.so", d);
    writeFile(d + "/bin/README", "not a binary\n");
  }
  static void TearDownTestSuite() {
    delete Dir;
    Dir = nullptr;
  }
  static std::string at(const std::string &rel) { return *Dir / rel; }
  static TempDir *Dir;
  TempDir Work;
};
TempDir *ExtractBinary::Dir = nullptr;

TEST_F(ExtractBinary, ExecutablesAndSharedLibrariesFromBothLinkers) {
  std::string out = Work / "out";
  mustRun(Tool + " --input_type=binary --input=" + quote(at("bin")) + " --output_dir=" + quote(out));
  std::vector<std::string> expected = {
      "libapi-gnu.so/vec.cpp", "libapi-gnu.so/api.cpp", "libapi.so/vec.cpp", "libapi.so/api.cpp", "prog/main.c",
      "prog/util.c",           "prog/util.c@2",         "prog-gnu/main.c",   "prog-gnu/util.c",   "prog-gnu/util.c@2"};
  EXPECT_EQ(modules(out), expected);
  EXPECT_TRUE(problems(out).empty());

  // Each module is its object's sections, byte for byte, paired in link order.
  TempDir scratch;
  std::map<std::string, std::string> objectOf = {{"main.c", "obj/main.o"},
                                                 {"util.c", "obj/util.o"},
                                                 {"util.c@2", "obj/sub/util.o"},
                                                 {"vec.cpp", "obj/vec.o"},
                                                 {"api.cpp", "obj/api.o"}};
  for (const std::string &name : expected) {
    std::string object = at(objectOf.at(name.substr(name.find('/') + 1)));
    EXPECT_EQ(readFile(out + "/" + name + ".bc"), section(object, ".llvmbc", scratch)) << name;
    EXPECT_EQ(readFile(out + "/" + name + ".cmd"), section(object, ".llvmcmd", scratch)) << name;
  }
  // The result is a corpus the other tools accept.
  mustRun(tool("validate-corpus") + " " + quote(out));
}

TEST_F(ExtractBinary, OneBinaryIsNamedByItsFileName) {
  std::string out = Work / "out";
  mustRun(Tool + " --input_type=binary --input=" + quote(at("bin/libapi.so")) + " --output_dir=" + quote(out));
  EXPECT_EQ(modules(out), (std::vector<std::string>{"libapi.so/vec.cpp", "libapi.so/api.cpp"}));
}

TEST_F(ExtractBinary, CountMismatchIsReported) {
  std::string d = Work.path();
  // An object whose command line was stripped: 3 modules, 2 command lines.
  mustRun(Objcopy + " --remove-section=.llvmcmd " + quote(at("obj/util.o")) + " " + quote(d + "/util-nocmd.o"));
  fs::create_directories(d + "/bin");
  mustRun(Clang + " -fuse-ld=lld --ld-path=" + Lld + " " + quote(at("obj/main.o")) + " " + quote(d + "/util-nocmd.o") +
          " " + quote(at("obj/sub/util.o")) + " -o " + quote(d + "/bin/odd"));
  std::string out = Work / "out";
  mustRun(Tool + " --input_type=binary --input=" + quote(d + "/bin") + " --output_dir=" + quote(out));
  EXPECT_EQ(problems(out), (std::map<std::string, int>{{"failed:module_count_mismatch", 1}}));
  nlohmann::json rep = nlohmann::json::parse(readFile(out + "/.mlgo-corpus/extract_ir.report.json"));
  EXPECT_NE(rep["problems"][0]["detail"].get<std::string>().find("3 modules but the command-line section holds 2"),
            std::string::npos)
      << rep.dump();
  EXPECT_TRUE(modules(out).empty());
}

TEST_F(ExtractBinary, RelocatableLinkInDirectoryModeIsSplit) {
  std::string d = Work.path();
  mustRun(Lld + " -r " + quote(at("obj/main.o")) + " " + quote(at("obj/util.o")) + " -o " + quote(d + "/merged.o"));
  mustRun(Objcopy + " " + quote(at("obj/sub/util.o")) + " " + quote(d + "/plain.o"));
  std::string out = Work / "out";
  mustRun(Tool + " --input_type=directory --input=" + quote(d) + " --output_dir=" + quote(out));
  EXPECT_EQ(modules(out), (std::vector<std::string>{"merged.o/main.c", "merged.o/util.c", "plain.o"}));
  TempDir scratch;
  EXPECT_EQ(readFile(out + "/merged.o/util.c.bc"), section(at("obj/util.o"), ".llvmbc", scratch));
  EXPECT_EQ(readFile(out + "/plain.o.bc"), section(at("obj/sub/util.o"), ".llvmbc", scratch));
}

} // namespace
