// extract-ir and make-corpus on inputs from someone else and on outputs that
// span file systems (issue #20, findings 3 and 13), with real clang-22 and
// ld.lld-22 objects.
#include "support/TestSupport.h"

#include "mlgo/corpus/CorpusDescription.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/mount.h>
#include <sys/stat.h>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string ExtractIr = tool("extract-ir");
const std::string MakeCorpus = tool("make-corpus");
const std::string Clang = MLGO_CLANG;

nlohmann::json reportOf(const std::string &out, const char *state) {
  return nlohmann::json::parse(readFile(out + "/.mlgo-corpus/" + state + ".report.json"));
}

// The report's problem of `module` (by output name), or null.
nlohmann::json problemOf(const nlohmann::json &report, const std::string &module) {
  for (const auto &p : report["problems"])
    if (p.value("name", "") == module)
      return p;
  return nullptr;
}

std::vector<std::string> corpusModules(const std::string &out) {
  return nlohmann::json::parse(readFile(out + "/corpus_description.json"))["modules"].get<std::vector<std::string>>();
}

bool containsBytes(const std::string &dir, const std::string &needle) {
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && readFile(e.path().string()).find(needle) != std::string::npos)
      return true;
  return false;
}

// Distributed ThinLTO objects whose embedded -fthinlto-index= names files an
// attacker chose. Each object is compiled by clang-22 against a real index
// at that path (clang reads it); the file there is then swapped for the
// hostile one, as a crafted object would name it.
TEST(ExtractTrust, DistributedThinLTOIndexMustBeAnIndexInsideTheBuildDirectory) {
  TempDir work;
  std::string build = work / "build", outside = work / "outside";
  fs::create_directories(build + "/native");
  fs::create_directories(outside);
  writeFile(build + "/m.c", "int b(int);\nint m(int x) { return b(x) + 1; }\n");
  writeFile(build + "/b.c", "int b(int x) { return x * 7; }\n");
  mustRun(Clang + " -flto=thin -O2 -c m.c -o m.o && " + Clang + " -flto=thin -O2 -c b.c -o b.o", build);
  mustRun(std::string(MLGO_LLD) + " --thinlto-index-only -shared m.o b.o -o libmb.so", build);
  std::string realIndex = readFile(build + "/m.o.thinlto.bc");
  const std::string secret = "root:x:0:0:secret-from-outside-the-build:/root:/bin/sh\n";

  // name -> the -fthinlto-index value embedded in its command line
  std::vector<std::pair<std::string, std::string>> objects = {
      {"good", "m.o.thinlto.bc"},     {"absolute", outside + "/passwd"}, {"dotdot", "../outside/dotdot.thinlto.bc"},
      {"symlink", "link.thinlto.bc"}, {"notindex", "plain.thinlto.bc"},  {"recursive", "recursive.thinlto.bc"},
  };
  writeFile(outside + "/passwd", realIndex);
  writeFile(outside + "/dotdot.thinlto.bc", realIndex);
  writeFile(build + "/link.thinlto.bc", realIndex);
  writeFile(build + "/plain.thinlto.bc", realIndex);
  writeFile(build + "/recursive.thinlto.bc", realIndex);
  std::string entries;
  for (const auto &[name, index] : objects) {
    std::string cmd = Clang + " -O2 -c -x ir m.o -fthinlto-index=" + index + " -o native/" + name +
                      ".o -mllvm -lto-embed-bitcode=post-merge-pre-opt";
    mustRun(cmd, build);
    entries +=
        std::string(entries.empty() ? "" : ",\n") + "{\"directory\": \"" + build + "\", \"command\": \"" + cmd + "\"}";
  }
  writeFile(work / "cc.json", "[\n" + entries + "\n]\n");
  // The swap: secrets outside, a symlink out of the build, bitcode that is
  // not an index (clang-22 -emit-llvm without -flto has no summary).
  writeFile(outside + "/passwd", secret);
  writeFile(outside + "/dotdot.thinlto.bc", secret);
  writeFile(outside + "/linked", secret);
  fs::remove(build + "/link.thinlto.bc");
  fs::create_symlink(outside + "/linked", build + "/link.thinlto.bc");
  mustRun(Clang + " -O2 -c -emit-llvm b.c -o plain.thinlto.bc", build);
  // A summary that sends libLLVM 22's summary reader into unbounded
  // recursion (found by fuzz/bitcode): reading it overflowed extract-ir's
  // stack, and the whole run died.
  fs::copy_file(std::string(MLGO_SOURCE_DIR) + "/fuzz/regressions/bitcode/summary-recursion-overflows-the-stack.bc",
                build + "/recursive.thinlto.bc", fs::copy_options::overwrite_existing);

  std::string out = work / "out";
  CommandResult r = run(ExtractIr + " --input=" + quote(work / "cc.json") +
                        " --thinlto_build=distributed --output_dir=" + quote(out));
  ASSERT_EQ(r.ExitCode, 0) << r.Err; // per-module failures, not a failed job
  // The recursive summary is bitcode with a summary as far as the check
  // reads: it is copied, and a compile that reads it is isolated.
  EXPECT_EQ(corpusModules(out), (std::vector<std::string>{"native/good.o", "native/recursive.o"}));
  EXPECT_EQ(readFile(out + "/native/good.o.thinlto.bc"), realIndex);
  EXPECT_FALSE(containsBytes(out, "secret-from-outside-the-build")) << "a file outside the build was copied";
  nlohmann::json report = reportOf(out, "extract_ir");
  for (const char *name : {"absolute", "dotdot", "symlink"}) {
    nlohmann::json p = problemOf(report, std::string("native/") + name + ".o");
    ASSERT_FALSE(p.is_null()) << name << ": " << report.dump(2);
    EXPECT_EQ(p["status"], "failed") << name;
    EXPECT_EQ(p["reason"], "thinlto_index_outside_base") << name << ": " << p.dump();
    EXPECT_NE(p["detail"].get<std::string>().find("outside the build directory"), std::string::npos) << p.dump();
    EXPECT_FALSE(exists(out + "/native/" + name + ".o.thinlto.bc")) << name;
    EXPECT_FALSE(exists(out + "/native/" + name + ".o.bc")) << name;
  }
  nlohmann::json p = problemOf(report, "native/notindex.o");
  ASSERT_FALSE(p.is_null()) << report.dump(2);
  EXPECT_EQ(p["reason"], "thinlto_index_invalid") << p.dump();
  EXPECT_NE(p["detail"].get<std::string>().find("without a module summary index"), std::string::npos) << p.dump();
  EXPECT_FALSE(exists(out + "/native/notindex.o.thinlto.bc"));
}

// Mounts a small tmpfs on `dir` for the test's lifetime; unmounted at
// destruction, also when the test fails.
class TmpfsMount {
public:
  explicit TmpfsMount(const std::string &dir) : Dir(dir) {
    fs::create_directories(dir);
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=8m") == 0)
      Mounted = true;
    else
      Error = std::strerror(errno);
  }
  ~TmpfsMount() {
    if (Mounted)
      ::umount2(Dir.c_str(), MNT_DETACH);
  }
  bool mounted() const { return Mounted; }
  const std::string &error() const { return Error; }
  bool remountReadOnly() { return ::mount("tmpfs", Dir.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=8m") == 0; }

private:
  std::string Dir, Error;
  bool Mounted = false;
};

dev_t deviceOf(const std::string &path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_dev;
}

// A module directory of the output on another file system: re-runs replace
// its files (rename and link cannot cross file systems), and a module whose
// files cannot be rewritten stays in the corpus, reported, exit non-zero.
TEST(ExtractTrust, ReRunWithAModuleDirectoryOnAnotherFileSystem) {
  TempDir work;
  std::string in = work / "in", out = work / "out";
  writeFile(in + "/top.c", "int top(int x) { return x + 1; }\n");
  writeFile(in + "/sub/x.c", "int x(int v) { return v * 5; }\n");
  mustRun(Clang + " -O2 -c -emit-llvm top.c -o top.bc", in);
  mustRun(Clang + " -O2 -c -emit-llvm x.c -o x.bc", in + "/sub");
  fs::remove(in + "/top.c");
  fs::remove(in + "/sub/x.c");
  TmpfsMount mount(out + "/sub");
  if (!mount.mounted())
    GTEST_SKIP() << "cannot mount a tmpfs (" << mount.error() << "): needs root with CAP_SYS_ADMIN";
  ASSERT_NE(deviceOf(out + "/sub"), deviceOf(out));

  std::string command = MakeCorpus + " --input_dir=" + quote(in) + " --output_dir=" + quote(out);
  const std::vector<std::string> all = {"sub/x", "top"};
  for (int runNumber = 1; runNumber <= 2; ++runNumber) {
    CommandResult r = run(command);
    ASSERT_EQ(r.ExitCode, 0) << "run " << runNumber << ": " << r.Err;
    auto modules = corpusModules(out);
    std::sort(modules.begin(), modules.end());
    EXPECT_EQ(modules, all) << "run " << runNumber;
    EXPECT_EQ(readFile(out + "/sub/x.bc"), readFile(in + "/sub/x.bc"));
    EXPECT_EQ(reportOf(out, "make_corpus")["problems"].size(), 0u) << reportOf(out, "make_corpus").dump(2);
  }
  EXPECT_EQ(listTree(out + "/sub"), (std::set<std::string>{"x.bc"})) << "no temporary left on the mount";

  // Forced failure: the mount turns read-only, so sub/x cannot be rewritten.
  ASSERT_TRUE(mount.remountReadOnly()) << std::strerror(errno);
  std::string before = readFile(out + "/sub/x.bc");
  CommandResult r = run(command);
  EXPECT_NE(r.ExitCode, 0) << "a module that could not be rewritten must not pass silently";
  EXPECT_NE(r.Err.find("could not be rewritten"), std::string::npos) << r.Err;
  auto modules = corpusModules(out);
  std::sort(modules.begin(), modules.end());
  EXPECT_EQ(modules, all) << "the corpus shrank";
  EXPECT_EQ(readFile(out + "/sub/x.bc"), before);
  nlohmann::json p = problemOf(reportOf(out, "make_corpus"), "sub/x");
  ASSERT_FALSE(p.is_null()) << reportOf(out, "make_corpus").dump(2);
  EXPECT_EQ(p["status"], "failed");
  EXPECT_EQ(p["reason"], "write_failed");
}

} // namespace

// An archive member whose header declares more bytes than the archive holds
// (a fuzzer find): libLLVM parsed the member's ELF past the end of the
// archive (ASan: SEGV). It is now that member's failure, named.
TEST(ExtractTrust, AnArchiveMemberLongerThanTheArchiveIsAFailureNotAReadPastItsEnd) {
  TempDir work;
  std::filesystem::create_directories(work / "objs");
  std::filesystem::copy_file(std::string(MLGO_SOURCE_DIR) +
                                 "/fuzz/regressions/object_sections/archive-member-past-the-end.a",
                             work / "objs/lib.o");
  CommandResult r = run(tool("extract-ir") + " --input_type=directory --input=" + quote(work / "objs") +
                        " --output_dir=" + quote(work / "out"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("lib.o(elf.o): the member's size (4544 bytes) extends past the end of the archive"),
            std::string::npos)
      << r.Err;
}
