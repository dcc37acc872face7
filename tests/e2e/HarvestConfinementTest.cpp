// Defence in depth (issue 33, docs/security.md "Landlock confinement"): with
// the screen switched off (--trust_corpus_commands), a hostile corpus line is
// still stopped by confinement alone, compile server on and off: a compile
// executes nothing outside the compiler's installation (-exec-on-ir-change),
// loads no shared object it was not given (-load, -fpass-plugin=, even from
// inside the corpus), and reads no file outside what it needs into the
// journal or the object (-ivfsoverlay, -fembed-offload-object=). An input the
// user allows with --compiler_readable_dir is read. Real clang-22 throughout.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include "mlgo/support/Landlock.h"

#include <nlohmann/json.hpp>

#include <filesystem>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

// A credential-like token that must never leave its file.
const std::string Token = "TOKEN-5f3a9c1e-do-not-leak";

class HarvestConfinement : public ::testing::Test {
protected:
  void SetUp() override {
    if (mlgo::landlockSupport().Abi < 1)
      GTEST_SKIP() << "no Landlock: " << mlgo::landlockSupport().Problem;
    fs::create_directories(Markers);
    Corpus =
        makeEmbeddedBitcodeCorpus(Work.path(), {{"m", inlinerSource(20, 20)}}, "-O2", ObjectListing::CompileCommands);
    // A shared object inside the corpus whose constructor leaves a marker
    // where the compiles may write (so that only its not being loaded keeps
    // the marker away).
    writeFile(Work / "evil.c", "#include <stdio.h>\n__attribute__((constructor)) static void pwn(void) {\n"
                               "  FILE *f = fopen(\"" +
                                   Markers +
                                   "/loaded\", \"w\");\n  if (f) { fputs(\"pwned\\n\", f); fclose(f); }\n}\n");
    mustRun(std::string(MLGO_CLANG) + " -shared -fPIC -o " + quote(Corpus + "/evil.so") + " " + quote(Work / "evil.c"));
    // A program outside the toolchain that leaves a marker when it runs.
    fs::create_directories(Work / "hostile");
    Program = writeScript(Work / "hostile/changed.sh", "#!/bin/sh\necho ran >> " + quote(Markers + "/executed") + "\n");
    writeFile(Secret, Token + ": [this line is quoted by YAML errors\n");
  }

  std::string cmdPath() {
    for (const auto &entry : fs::recursive_directory_iterator(Corpus))
      if (entry.path().extension() == ".cmd")
        return entry.path().string();
    ADD_FAILURE() << "no .cmd in " << Corpus;
    return "";
  }
  void setCmdTail(const std::vector<std::string> &args) {
    std::string path = cmdPath();
    if (Original.empty())
      Original = readFile(path);
    std::string bytes = Original;
    for (const std::string &a : args)
      bytes += a + std::string(1, '\0');
    writeFile(path, bytes);
  }

  // Harvests with the screen off, the markers' directory writable; the
  // module's journal record.
  nlohmann::json harvestTrusted(const std::string &out, const std::string &server, const std::string &extra = "") {
    CommandResult r =
        run(harvestCommand(Corpus, out,
                           "--compiler=clang --mode=interactive --trust_corpus_commands --compile_server=" + server +
                               " --compiler_writable_dir=" + quote(Markers) +
                               " --explicit_temps_dir=" + quote(out + "-temps") + " " + extra));
    EXPECT_EQ(r.ExitCode, 0) << r.Err;
    auto journal = journalByModule(out);
    EXPECT_EQ(journal.size(), 1u) << r.Err;
    return journal.empty() ? nlohmann::json() : journal.begin()->second;
  }

  // The record says which input the compile may not read, and how to allow it.
  static void expectNamedUnreadable(const nlohmann::json &record, const std::string &input) {
    std::string detail = record.value("detail", "");
    EXPECT_NE(detail.find(input), std::string::npos) << record;
    EXPECT_NE(detail.find("--compiler_readable_dir"), std::string::npos) << record;
  }

  // Whether `text` appears in any file beneath `dir`.
  static bool anyFileHolds(const std::string &dir, const std::string &text) {
    if (!fs::exists(dir))
      return false;
    for (const auto &entry : fs::recursive_directory_iterator(dir))
      if (entry.is_regular_file() && readFile(entry.path().string()).find(text) != std::string::npos)
        return true;
    return false;
  }

  TempDir Work;
  std::string Markers = Work / "markers", Secret = Work / "secret.yaml", Corpus, Program, Original;
};

TEST_F(HarvestConfinement, ACompileExecutesNothingOutsideTheToolchain) {
  setCmdTail({"-mllvm", "-exec-on-ir-change=" + Program});
  for (const char *server : {"off", "on"}) {
    std::string out = Work / (std::string("exec-") + server);
    nlohmann::json record = harvestTrusted(out, server);
    EXPECT_FALSE(exists(Markers + "/executed")) << server << ": the corpus' program ran; " << record;
    EXPECT_EQ(record["status"], "ok") << record; // the screen was off: the compile ran, without the program
    auto summary = harvestSummary(out);
    EXPECT_EQ(summary["confinement"]["active"], true);
    for (const auto &path : summary["confinement"]["executable"])
      EXPECT_NE(Program.rfind(path.get<std::string>() + "/", 0), 0u) << path << " would let " << Program << " run";
  }
}

TEST_F(HarvestConfinement, ACompileLoadsNoSharedObjectFromTheCorpus) {
  for (const std::vector<std::string> &load : {std::vector<std::string>{"-load", Corpus + "/evil.so"},
                                               std::vector<std::string>{"-fpass-plugin=" + Corpus + "/evil.so"}}) {
    setCmdTail(load);
    for (const char *server : {"off", "on"}) {
      std::string out = Work / ("load-" + std::to_string(load.size()) + server);
      nlohmann::json record = harvestTrusted(out, server);
      EXPECT_FALSE(exists(Markers + "/loaded")) << load[0] << ", server " << server << ": loaded; " << record;
      // The failure says why.
      EXPECT_EQ(record["status"], "failed") << record;
      EXPECT_NE(record["stderr_tail"].get<std::string>().find("Permission denied"), std::string::npos) << record;
    }
  }
}

TEST_F(HarvestConfinement, AFileOutsideTheCorpusReachesNeitherTheJournalNorTheObject) {
  for (const char *server : {"off", "on"}) {
    // clang's YAML error would quote the secret's line into stderr_tail.
    setCmdTail({"-ivfsoverlay", Secret});
    std::string out = Work / (std::string("overlay-") + server);
    nlohmann::json record = harvestTrusted(out, server);
    EXPECT_EQ(record["status"], "failed") << record;
    expectNamedUnreadable(record, Secret);
    EXPECT_FALSE(anyFileHolds(out, Token)) << server;
    EXPECT_FALSE(anyFileHolds(out + "-temps", Token)) << server;

    // -fembed-offload-object= would put the whole file into the object.
    setCmdTail({"-fembed-offload-object=" + Secret});
    out = Work / (std::string("embed-") + server);
    record = harvestTrusted(out, server);
    EXPECT_EQ(record["status"], "failed") << record;
    expectNamedUnreadable(record, Secret);
    EXPECT_FALSE(anyFileHolds(out, Token)) << server;
    EXPECT_FALSE(anyFileHolds(out + "-temps", Token)) << server;
  }
}

TEST_F(HarvestConfinement, AnInputOutsideIsReadOnlyWhereTheUserAllowsIt) {
  fs::create_directories(Work / "allowed");
  std::string overlay = Work / "allowed/overlay.yaml";
  writeFile(overlay, "{ 'version': 0, 'roots': [] }\n");
  setCmdTail({"-ivfsoverlay", overlay});
  for (const char *server : {"off", "on"}) {
    std::string out = Work / (std::string("denied-") + server);
    nlohmann::json record = harvestTrusted(out, server);
    EXPECT_EQ(record["status"], "failed") << record;
    EXPECT_EQ(record["reason"], "compiler_failed") << record;
    expectNamedUnreadable(record, overlay);

    out = Work / (std::string("allowed-") + server);
    record = harvestTrusted(out, server, "--compiler_readable_dir=" + quote(Work / "allowed"));
    EXPECT_EQ(record["status"], "ok") << record;
    auto readable = harvestSummary(out)["confinement"]["readable"];
    EXPECT_NE(std::find(readable.begin(), readable.end(), fs::canonical(Work / "allowed").string()), readable.end())
        << readable;
  }
}

// A driver-form line (here a global_command_override) would make clang link
// too; confined, it could not run the linker: harvest-logs passes -c.
TEST_F(HarvestConfinement, ADriverFormLineCompilesWithoutLinking) {
  std::string description = Corpus + "/corpus_description.json";
  auto corpus = nlohmann::json::parse(readFile(description));
  corpus["global_command_override"] = {"-O2"};
  writeFile(description, corpus.dump());
  for (const char *server : {"off", "on"}) {
    nlohmann::json record = harvestTrusted(Work / (std::string("driver-") + server), server);
    EXPECT_EQ(record["status"], "ok") << server << ": " << record;
  }
}

} // namespace
