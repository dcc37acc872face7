// Issue 33 #1, #2 and #4: the line harvest-logs screens is the line that
// runs. A corpus line that reaches past the screen (an -mllvm option that
// runs a program, a response file, a driver line that would link, read a
// config file or run another assembler, a file embedded into the object) is
// refused in every mode that runs the corpus' line (clang, compile server on
// and off, inliner and regalloc), and validate-corpus says so too; a driver
// line that is safe runs as its one cc1 job and never links. Real clang-22.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <filesystem>

using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

class HarvestScreen : public ::testing::Test {
protected:
  void SetUp() override {
    // A program and a plugin that announce themselves by ending the compile
    // with exit status 86: seen even when Landlock stops them writing.
    writeFile(Program, "#!/bin/sh\nexit 86\n");
    fs::permissions(Program, fs::perms::owner_all);
    writeFile(Work / "evil.c",
              "#include <unistd.h>\n__attribute__((constructor)) static void pwn(void) { _exit(86); }\n");
    mustRun(std::string(MLGO_CLANG) + " -shared -fPIC -o " + quote(Evil) + " " + quote(Work / "evil.c"));
    writeFile(Rsp, "-load " + Evil + "\n");
    writeFile(Secret, std::string("SECRET-TOKEN-") + "4242\n");
    Corpus = makeEmbeddedBitcodeCorpus(Work.path(),
                                       {{"exec", inlinerSource(20, 20)},
                                        {"rsp", inlinerSource(21, 21)},
                                        {"offload", inlinerSource(22, 22)},
                                        {"overlay", inlinerSource(23, 23)},
                                        {"plain", inlinerSource(24, 24)}},
                                       "-Oz", ObjectListing::CompileCommands);
    appendToCmd("exec", {"-mllvm", "-exec-on-ir-change=" + Program});
    appendToCmd("rsp", {"-main-file-name", "@" + Rsp});
    appendToCmd("offload", {"-fembed-offload-object=" + Secret});
    appendToCmd("overlay", {"-ivfsoverlay", Secret});
  }

  void appendToCmd(const std::string &stem, const std::vector<std::string> &args) {
    mlgo::test::appendToCmd(Corpus, stem, args);
  }
  static nlohmann::json recordOf(const std::map<std::string, nlohmann::json> &journal, const std::string &stem) {
    for (const auto &[name, record] : journal)
      if (fs::path(name).filename().string().find(stem) == 0)
        return record;
    ADD_FAILURE() << "no record for " << stem;
    return {};
  }
  // The corpus with `override` as its global_command_override, in a copy.
  std::string withOverride(const std::string &name, const nlohmann::json &override) {
    std::string copy = Work / name;
    fs::copy(Corpus, copy, fs::copy_options::recursive);
    auto description = nlohmann::json::parse(readFile(copy + "/corpus_description.json"));
    description["global_command_override"] = override;
    writeFile(copy + "/corpus_description.json", description.dump(2));
    return copy;
  }
  void expectNoSecretIn(const std::string &dir) {
    for (const auto &entry : fs::recursive_directory_iterator(dir))
      if (entry.is_regular_file())
        EXPECT_EQ(readFile(entry.path()).find("SECRET-TOKEN-4242"), std::string::npos) << entry.path();
  }

  TempDir Work;
  std::string Program = Work / "evil.sh", Evil = Work / "libevil.so", Rsp = Work / "evil.rsp",
              Secret = Work / "secret.txt", Corpus;
};

TEST_F(HarvestScreen, LinesThatReachPastTheScreenAreRefusedInEveryMode) {
  for (const std::string &flags : {std::string("--compiler=clang --mode=interactive --compile_server=off"),
                                   std::string("--compiler=clang --mode=interactive --compile_server=on"),
                                   std::string("--compiler=clang --mode=plugin --compile_server=off"),
                                   std::string("--compiler=clang --mode=plugin --compile_server=on"),
                                   std::string("--problem=regalloc-evict --policy=random:0.5:1 --compile_server=off"),
                                   std::string("--problem=regalloc-evict --policy=random:0.5:1 --compile_server=on")}) {
    SCOPED_TRACE(flags);
    std::string out = Work / ("out" + std::to_string(std::hash<std::string>{}(flags)));
    CommandResult r = run(harvestCommand(Corpus, out, flags + " --explicit_temps_dir=" + out + ".temps"));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    auto journal = journalByModule(out);
    ASSERT_EQ(journal.size(), 5u);
    for (const char *stem : {"exec", "rsp", "offload"}) {
      nlohmann::json record = recordOf(journal, stem);
      EXPECT_EQ(record["status"], "failed") << stem << ": " << record;
      EXPECT_EQ(record["reason"], "unsafe_command_line") << stem << ": " << record;
    }
    EXPECT_NE(recordOf(journal, "exec")["detail"].get<std::string>().find("-exec-on-ir-change="), std::string::npos);
    EXPECT_NE(recordOf(journal, "rsp")["detail"].get<std::string>().find("response file"), std::string::npos);
    EXPECT_NE(recordOf(journal, "offload")["detail"].get<std::string>().find("-fembed-offload-object="),
              std::string::npos);
    // A VFS overlay means nothing to an IR compile: dropped, never read.
    EXPECT_EQ(recordOf(journal, "overlay")["status"], "ok") << recordOf(journal, "overlay");
    EXPECT_EQ(recordOf(journal, "plain")["status"], "ok") << recordOf(journal, "plain");
    expectNoSecretIn(out);
    expectNoSecretIn(out + ".temps");
  }
}

TEST_F(HarvestScreen, ValidateCorpusGivesTheSameVerdict) {
  CommandResult v = run(tool("validate-corpus") + " --json " + quote(Corpus));
  EXPECT_EQ(v.ExitCode, 1) << v.Out << v.Err;
  std::set<std::string> flagged;
  nlohmann::json report = nlohmann::json::parse(v.Out);
  for (const auto &p : report["problems"]) {
    EXPECT_EQ(p["code"], "unsafe_command_line") << p;
    flagged.insert(fs::path(p["module"].get<std::string>()).filename().string().substr(0, 3));
  }
  EXPECT_EQ(flagged, (std::set<std::string>{"exe", "rsp", "off"})) << v.Out;
}

// A driver-form global_command_override runs as the one cc1 job clang's
// driver makes of it with -c: never a link (whose plugins ld would load),
// never a line the screen did not see.
TEST_F(HarvestScreen, DriverOverridesRunAsTheirCc1JobOrAreRefused) {
  struct Case {
    nlohmann::json Override;
    bool Safe;
    const char *Named;
  };
  for (const Case &c : {Case{{"-Oz", "-Wl,-plugin," + Evil}, true, ""},
                        Case{{"-Oz", "-Xlinker", "-plugin", "-Xlinker", Evil}, true, ""}, Case{{"-Oz"}, true, ""},
                        Case{{"-Oz", "-isystem", "@" + Rsp}, false, "response file"},
                        Case{{"-Oz", "--config=" + Rsp}, false, "--config="},
                        Case{{"-Oz", "-ccc-install-dir", Work.path()}, false, "-ccc-install-dir"},
                        Case{{"-Oz", "-fno-integrated-as"}, false, "jobs"},
                        Case{{"-Oz", "-mllvm", "-exec-on-ir-change=" + Program}, false, "-exec-on-ir-change="}}) {
    SCOPED_TRACE(c.Override.dump());
    std::string corpus = withOverride("c" + std::to_string(std::hash<std::string>{}(c.Override.dump())), c.Override);
    for (const char *server : {"off", "on"}) {
      std::string out = corpus + ".out-" + server;
      CommandResult r = run(harvestCommand(corpus, out,
                                           std::string("--compiler=clang --mode=interactive --modules_filter=.*plain "
                                                       "--compile_server=") +
                                               server));
      ASSERT_EQ(r.ExitCode, 0) << r.Err;
      auto journal = journalByModule(out);
      ASSERT_EQ(journal.size(), 1u);
      nlohmann::json record = journal.begin()->second;
      if (c.Safe) {
        EXPECT_EQ(record["status"], "ok") << server << ": " << record;
        EXPECT_GT(record["native_size"].get<int64_t>(), 0) << record;
      } else {
        EXPECT_EQ(record["reason"], "unsafe_command_line") << server << ": " << record;
        EXPECT_NE(record["detail"].get<std::string>().find(c.Named), std::string::npos) << record;
      }
    }
    CommandResult v = run(tool("validate-corpus") + " --json " + quote(corpus));
    bool refused = v.Out.find("\"unsafe_command_line\"") != std::string::npos &&
                   v.Out.find("global_command_override") != std::string::npos;
    EXPECT_EQ(refused, !c.Safe) << v.Out;
  }
}

} // namespace
