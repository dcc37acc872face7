// The rules for a corpus module's command line: the flags a harvest drops
// (issue 20 #5) and the screening of flags that load code or write files
// (issue 20 #1), checked against clang-22's own option table.
#include "mlgo/corpus/ModuleCommandLine.h"
#include "mlgo/corpus/DriverJob.h"
#include "mlgo/corpus/InertLlvmOptions.h"

#include "support/TestSupport.h"

#include "clang/Options/Options.h"
#include "llvm/Option/OptTable.h"
#include "llvm/Option/Option.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Regex.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sys/stat.h>

using namespace mlgo;
using Args = std::vector<std::string>;

namespace {

Args readCmd(const std::string &bytes) {
  test::TempDir dir;
  std::string path = dir / "m.cmd";
  test::writeFile(path, bytes);
  auto args = readModuleCommandLine(path);
  EXPECT_TRUE(static_cast<bool>(args)) << llvm::toString(args.takeError());
  return args ? *args : Args{};
}

std::string nul(const Args &fields) {
  std::string s;
  for (const std::string &f : fields)
    s += f + std::string(1, '\0');
  return s;
}

TEST(ModuleCommandLine, TrailingSplitDwarfFlagWithoutValueIsDroppedWithoutReadingPastTheEnd) {
  // The old loop stepped past the last field and read beyond the vector
  // (ASan: heap-buffer-overflow).
  EXPECT_EQ(readCmd(nul({"-cc1", "-O2", "-split-dwarf-file"})), (Args{"-cc1", "-O2"}));
  EXPECT_EQ(readCmd(nul({"-cc1", "-O2", "-split-dwarf-output"})), (Args{"-cc1", "-O2"}));
}

TEST(ModuleCommandLine, AValueThatLooksLikeALaterFlagIsConsumedOnce) {
  // The old loop matched the value against the next dropped flag too and
  // swallowed the -O2 after it.
  EXPECT_EQ(readCmd(nul({"-cc1", "-split-dwarf-file", "-split-dwarf-output", "-O2", "-emit-obj"})),
            (Args{"-cc1", "-O2", "-emit-obj"}));
  EXPECT_EQ(readCmd(nul({"-cc1", "-split-dwarf-output", "--warning-suppression-mappings=x", "-Oz"})),
            (Args{"-cc1", "-Oz"}));
}

TEST(ModuleCommandLine, DropsSideOutputsOfOrdinaryBuildsInEverySpelling) {
  Args line = {"-cc1",
               "-O2",
               "-split-dwarf-file",
               "a.dwo",
               "-split-dwarf-output",
               "a.dwo",
               "--warning-suppression-mappings=m.txt",
               "-dependency-file",
               "a.o.d",
               "-MT",
               "a.o",
               "-coverage-notes-file=/b/a.gcno",
               "-coverage-data-file=/b/a.gcda",
               "-ftime-trace=a.json",
               "-main-file-name",
               "a.c"};
  EXPECT_EQ(readCmd(nul(line)),
            (Args{"-cc1", "-O2", "-MT", "a.o", "-coverage-data-file=/b/a.gcda", "-main-file-name", "a.c"}));
  // Not a module flag: a value that happens to be spelled like one stays.
  EXPECT_EQ(dropHarvestFlags({"-cc1", "-main-file-name", "-split-dwarf-file", "-O2"}),
            (Args{"-cc1", "-main-file-name", "-split-dwarf-file", "-O2"}));
}

TEST(CommandLineScreen, OrdinaryClang22LinesAreSafe) {
  // As clang-22 -O2 -g / --coverage -MD -ftime-trace / -fsanitize=address
  // record them with -fembed-bitcode=all (the dropped flags already gone).
  Args plain = {"-cc1",
                "-triple",
                "x86_64-pc-linux-gnu",
                "-O2",
                "-emit-obj",
                "-disable-free",
                "-main-file-name",
                "a.c",
                "-mrelocation-model",
                "pic",
                "-pic-level",
                "2",
                "-pic-is-pie",
                "-debug-info-kind=constructor",
                "-dwarf-version=5",
                "-fdebug-compilation-dir=/src",
                "-fcoverage-compilation-dir=/src",
                "-resource-dir",
                "/usr/lib/llvm-22/lib/clang/22",
                "-internal-isystem",
                "/usr/include",
                "-MT",
                "b.o",
                "-sys-header-deps",
                "-coverage-data-file=/src/b.gcda",
                "-ferror-limit",
                "19",
                "-fembed-bitcode=all",
                "-fsanitize=address",
                "-fsanitize-system-ignorelist=/usr/lib/llvm-22/lib/clang/22/share/x.txt",
                "-mllvm",
                "-inline-threshold=100",
                "-faddrsig"};
  EXPECT_EQ(unsafeCommandLineFlag(plain), std::nullopt);
  EXPECT_EQ(unsafeCommandLineFlag(Args{"-c", "-Oz"}), std::nullopt); // a driver-style override
}

void expectUnsafe(const Args &line, const std::string &named) {
  auto why = unsafeCommandLineFlag(line);
  ASSERT_TRUE(why.has_value()) << "accepted: " << ::testing::PrintToString(line);
  EXPECT_NE(why->find(named), std::string::npos) << *why;
}

TEST(CommandLineScreen, CodeLoadingFlagsAreRefusedInEverySpelling) {
  expectUnsafe({"-cc1", "-O2", "-load", "/tmp/evil.so"}, "-load");
  expectUnsafe({"-cc1", "-fpass-plugin=/tmp/evil.so"}, "-fpass-plugin=");
  expectUnsafe({"-cc1", "-plugin", "evil"}, "-plugin");
  expectUnsafe({"-cc1", "-add-plugin", "evil"}, "-add-plugin");
  expectUnsafe({"-cc1", "-plugin-arg-evil", "x"}, "-plugin-arg-");
  expectUnsafe({"-O2", "-fplugin=/tmp/evil.so"}, "-fplugin=");                   // driver line
  expectUnsafe({"-O2", "-Xclang", "-load", "-Xclang", "/tmp/evil.so"}, "-load"); // passed on to cc1
  expectUnsafe({"-O2", "-B/tmp/bin"}, "-B");
  expectUnsafe({"-cc1", "-O2", "-load"}, "-load"); // even without its value
}

TEST(CommandLineScreen, FileWritingFlagsAreRefusedInEverySpelling) {
  expectUnsafe({"-cc1", "-stats-file=/home/u/.bashrc"}, "-stats-file=");
  expectUnsafe({"-cc1", "-dependency-dot", "x.dot"}, "-dependency-dot");
  expectUnsafe({"-cc1", "-diagnostic-log-file", "x.log"}, "-diagnostic-log-file");
  expectUnsafe({"-cc1", "-header-include-file", "h.txt"}, "-header-include-file");
  expectUnsafe({"-cc1", "-serialize-diagnostic-file", "d.dia"}, "-serialize-diagnostic-file");
  expectUnsafe({"-cc1", "-o", "/home/u/file"}, "-o");
  expectUnsafe({"-cc1", "-o/home/u/file"}, "-o");
  expectUnsafe({"-cc1", "-fmodules-cache-path=/x"}, "-fmodules-cache-path=");
  expectUnsafe({"-cc1", "-save-temps=cwd"}, "-save-temps=");
  expectUnsafe({"-cc1", "-working-directory", "/home/u"}, "-working-directory");
  expectUnsafe({"-cc1", "-working-directory=/home/u"}, "-working-directory"); // an alias
  expectUnsafe({"-O2", "-MF", "/home/u/x.d"}, "-MF");
  expectUnsafe({"-O2", "-Xclang", "-stats-file=/home/u/x"}, "-stats-file=");
}

// The trust model: no file outside the corpus is read into the output.
TEST(CommandLineScreen, FlagsThatPutAnotherFilesContentsIntoTheObjectAreRefused) {
  expectUnsafe({"-cc1", "-mlink-bitcode-file", "/home/u/secret.bc"}, "-mlink-bitcode-file");
  expectUnsafe({"-cc1", "-mlink-builtin-bitcode", "/home/u/secret.bc"}, "-mlink-builtin-bitcode");
  expectUnsafe({"-cc1", "-fcuda-include-gpubinary", "/home/u/blob"}, "-fcuda-include-gpubinary");
  expectUnsafe({"-cc1", "--embed-dir=/home/u"}, "--embed-dir=");
  expectUnsafe({"-O2", "-Xclang", "-mlink-bitcode-file", "-Xclang", "/home/u/secret.bc"}, "-mlink-bitcode-file");
}

TEST(CommandLineScreen, UnknownOptionsExtraInputsAndLlvmFileOptionsAreRefused) {
  expectUnsafe({"-cc1", "-no-such-option-anywhere"}, "-no-such-option-anywhere");
  expectUnsafe({"-cc1", "/etc/passwd"}, "/etc/passwd");
  expectUnsafe({"-cc1", "-mllvm", "-info-output-file=/home/u/x"}, "-info-output-file");
  expectUnsafe({"-cc1", "-mllvm", "-no-such-llvm-option=1"}, "no-such-llvm-option");
  expectUnsafe({"-cc1", "-mllvm", "-view-cfg"}, "-view-cfg"); // starts a viewer
  expectUnsafe({"-cc1", "-mllvm", "-training-log=/home/u/x"}, "-training-log");
  EXPECT_EQ(unsafeLlvmOption("-inline-threshold=100"), std::nullopt);
  EXPECT_EQ(unsafeLlvmOption("-enable-ml-inliner=release"), std::nullopt);
}

// Issue 33 #1: a word filter over help texts let options through that run a
// program after every pass or start a viewer; only reviewed options pass.
TEST(CommandLineScreen, LlvmOptionsThatRunProgramsOrViewersAreRefused) {
  for (const char *value : {"-exec-on-ir-change=/tmp/evil", "-executor=/tmp/evil", "-attributor-view-dep-graph",
                            "-pgo-view-counts=graph", "-fs-viewbfi-after", "-dfa-jump-view-cfg-before",
                            "-x86-lvi-load-opt-plugin=/tmp/evil.so", "-sample-profile-file=/home/u/secret"}) {
    SCOPED_TRACE(value);
    EXPECT_NE(unsafeLlvmOption(value), std::nullopt);
    expectUnsafe({"-cc1", "-O2", "-mllvm", value}, value);
    expectUnsafe({"-O2", "-mllvm", value}, value);                       // driver line
    expectUnsafe({"-O2", std::string("-mllvm=") + value}, value);        // joined alias
    expectUnsafe({"-O2", "-Xclang", "-mllvm", "-Xclang", value}, value); // passed on to cc1
  }
  expectUnsafe({"-cc1", "-mllvm", "inline-threshold=5"}, "not an LLVM option"); // a positional of LLVM's
  expectUnsafe({"-cc1", "-mllvm", "--"}, "not an LLVM option");
}

// The screen accepts exactly the reviewed list, and every name on it is an
// option of the libLLVM we link (a typo would hide nothing, but a renamed
// option must be reviewed again).
TEST(CommandLineScreen, MllvmAcceptsOnlyTheReviewedOptions) {
  std::set<std::string> reviewed;
  for (llvm::StringRef name : inertLlvmOptions())
    reviewed.insert(name.str());
  EXPECT_GT(reviewed.size(), 100u);
  auto &registered = llvm::cl::getRegisteredOptions();
  EXPECT_GT(registered.size(), 2000u); // the walk sees all of libLLVM's options
  std::set<std::string> accepted;
  for (const auto &entry : registered) {
    std::string name = entry.first.str();
    if (!unsafeLlvmOption("-" + name) || !unsafeLlvmOption("-" + name + "=1"))
      accepted.insert(name);
  }
  std::set<std::string> unreviewed, unregistered;
  for (const std::string &name : accepted)
    if (!reviewed.count(name))
      unreviewed.insert(name);
  for (const std::string &name : reviewed)
    if (!registered.count(name))
      unregistered.insert(name);
  EXPECT_TRUE(unreviewed.empty()) << "accepted, not reviewed: " << ::testing::PrintToString(unreviewed);
  EXPECT_TRUE(unregistered.empty()) << "reviewed, not an option of libLLVM 22: "
                                    << ::testing::PrintToString(unregistered);
  EXPECT_EQ(accepted, reviewed);
}

// A report names every refused flag, not only the first (validate-corpus,
// the journal's detail): whoever fixes a corpus sees all it must change.
TEST(CommandLineScreen, EveryRefusedFlagIsNamed) {
  Args line = {"-cc1",
               "-mllvm",
               "-tsan-compound-read-before-write=1",
               "-load",
               "/tmp/evil.so",
               "-mllvm",
               "-exec-on-ir-change=/tmp/evil",
               "@/tmp/x.rsp",
               "-stats-file=/tmp/x"};
  std::vector<std::string> found = unsafeCommandLineFlags(line);
  ASSERT_EQ(found.size(), 4u) << ::testing::PrintToString(found);
  EXPECT_NE(found[0].find("@/tmp/x.rsp"), std::string::npos) << found[0];
  EXPECT_NE(found[1].find("-load"), std::string::npos) << found[1];
  EXPECT_NE(found[2].find("exec-on-ir-change"), std::string::npos) << found[2];
  EXPECT_NE(found[3].find("-stats-file="), std::string::npos) << found[3];
  Args driver = {"-O2",     "-mllvm",       "-exec-on-ir-change=/tmp/evil", "-Xclang", "-load",
                 "-Xclang", "/tmp/evil.so", "--config=/tmp/x.cfg"};
  found = unsafeCommandLineFlags(driver);
  ASSERT_EQ(found.size(), 3u) << ::testing::PrintToString(found);
  EXPECT_NE(found[0].find("exec-on-ir-change"), std::string::npos) << found[0];
  EXPECT_NE(found[1].find("--config="), std::string::npos) << found[1];
  EXPECT_NE(found[2].find("-Xclang -load"), std::string::npos) << found[2];
  llvm::Error e = screenCommandLine(line, "m.cmd");
  std::string message = llvm::toString(std::move(e));
  EXPECT_NE(message.find("-load"), std::string::npos) << message;
  EXPECT_NE(message.find("exec-on-ir-change"), std::string::npos) << message;
}

// Issue 33 #2: clang's main expands any argument that starts with '@', a
// separate option's value included, before it parses: never screened unseen.
TEST(CommandLineScreen, ResponseFilesAreRefusedWhereverTheyStand) {
  expectUnsafe({"-cc1", "-O2", "-main-file-name", "@/tmp/evil.rsp"}, "response file");
  expectUnsafe({"-cc1", "@/tmp/evil.rsp"}, "response file");
  expectUnsafe({"-O2", "-isystem", "@/tmp/evil.rsp"}, "response file");
  expectUnsafe({"-O2", "-Xclang", "@/tmp/evil.rsp"}, "response file");
  expectUnsafe({"-O2", "-Xclang=@/tmp/evil.rsp"}, "response file");
  expectUnsafe({"-cc1", "-mllvm", "@/tmp/evil.rsp"}, "response file");
  expectUnsafe({"-O2", "-mllvm=@/tmp/evil.rsp"}, "response file");
}

TEST(CommandLineScreen, EmbeddingAnOffloadObjectCopiesAFileAndOverlaysAreDropped) {
  expectUnsafe({"-cc1", "-fembed-offload-object=/home/u/secret"}, "-fembed-offload-object=");
  EXPECT_EQ(dropHarvestFlags(Args{"-cc1", "-O2", "-ivfsoverlay", "/home/u/secret", "-ivfsoverlay/home/u/x", "-Oz"}),
            (Args{"-cc1", "-O2", "-Oz"}));
  EXPECT_EQ(dropHarvestFlags(Args{"-cc1", "-vfsoverlay", "/home/u/secret", "-O2"}), (Args{"-cc1", "-O2"}));
}

llvm::Expected<Args> compileLine(const Args &line) {
  return screenedCompileLine(line, "m.cmd", "/usr/lib/llvm-22/bin/clang", "/corpus/m.bc");
}

void expectRefusedLine(const Args &line, const std::string &named) {
  auto got = compileLine(line);
  ASSERT_FALSE(static_cast<bool>(got)) << "accepted: " << ::testing::PrintToString(line) << " as "
                                       << ::testing::PrintToString(*got);
  std::string why = llvm::toString(got.takeError());
  EXPECT_NE(why.find(named), std::string::npos) << why;
  EXPECT_NE(why.find("m.cmd: unsafe command line"), std::string::npos) << why;
}

// Issue 33 #2: a driver line runs as the one cc1 job clang's driver makes of
// it with -c, screened again; anything else is refused.
TEST(CommandLineScreen, DriverLinesRunAsTheirOneCc1Job) {
  auto line = compileLine({"-Oz", "-g", "-fno-omit-frame-pointer", "-mllvm", "-inline-threshold=10", "-MD"});
  ASSERT_TRUE(static_cast<bool>(line)) << llvm::toString(line.takeError());
  ASSERT_FALSE(line->empty());
  EXPECT_EQ(line->front(), "-cc1");
  auto has = [&](const std::string &arg) { return std::find(line->begin(), line->end(), arg) != line->end(); };
  EXPECT_TRUE(has("-Oz"));
  EXPECT_TRUE(has("-emit-obj"));
  EXPECT_TRUE(has("-inline-threshold=10"));
  EXPECT_FALSE(has("/corpus/m.bc")) << "the input is harvest-logs' own";
  EXPECT_FALSE(has("-o"));
  EXPECT_FALSE(has("-dependency-file")) << "dropped as in a cc1 line";
  // What the driver would otherwise run or read: linker plugins, another
  // install directory, config files, an assembler, several jobs.
  expectRefusedLine({"-Oz", "--config=/tmp/evil.cfg"}, "--config");
  expectRefusedLine({"-Oz", "--config", "/tmp/evil.cfg"}, "--config");
  expectRefusedLine({"-Oz", "-ccc-install-dir", "/tmp/evil"}, "-ccc-install-dir");
  expectRefusedLine({"-Oz", "--driver-mode=cl"}, "--driver-mode=");
  // Planning itself would run this program (clang-22 does for --offload-arch=native).
  expectRefusedLine({"-Oz", "-fopenmp", "--offload-arch=native", "--amdgpu-arch-tool=/tmp/evil"},
                    "--offload-arch-tool=");
  expectRefusedLine({"-Oz", "-fuse-ld=/tmp/evil-ld"}, "-fuse-ld=");
  expectRefusedLine({"-Oz", "-S"}, "not one clang compile");
  expectRefusedLine({"-Oz", "-fno-integrated-as"}, "jobs");
  expectRefusedLine({"-Oz", "-save-temps"}, "-save-temps");
  expectRefusedLine({"-Oz", "-E"}, "jobs");
  expectRefusedLine({"-Oz", "-fplugin=/tmp/evil.so"}, "-fplugin=");
  expectRefusedLine({"-Oz", "-mllvm", "-exec-on-ir-change=/tmp/evil"}, "exec-on-ir-change");
  expectRefusedLine({"-Oz", "-isystem", "@/tmp/evil.rsp"}, "response file");
  expectRefusedLine({"-Oz", "-no-such-driver-option"}, "");
  // Linker flags mean nothing to a compile: the job has none of them.
  for (Args linking : {Args{"-Oz", "-Wl,-plugin,/tmp/evil.so"}, Args{"-Oz", "-Xlinker", "-plugin"},
                       Args{"-Oz", "-Wl,--plugin-opt=x"}}) {
    auto job = compileLine(linking);
    ASSERT_TRUE(static_cast<bool>(job)) << llvm::toString(job.takeError());
    for (const std::string &arg : *job)
      EXPECT_EQ(arg.find("plugin"), std::string::npos) << ::testing::PrintToString(*job);
  }
  // A cc1 line is screened and run as it is.
  auto cc1 = compileLine({"-cc1", "-Oz", "-emit-obj"});
  ASSERT_TRUE(static_cast<bool>(cc1)) << llvm::toString(cc1.takeError());
  EXPECT_EQ(*cc1, (Args{"-cc1", "-Oz", "-emit-obj"}));
}

// clang-22's driver runs an offload-arch tool while it plans: planning
// happens in a child confined as a compile is, which may execute nothing
// outside its toolchain (even where the screen let such a flag through).
TEST(DriverJob, PlanningRunsNoProgramOutsideTheToolchain) {
  test::TempDir dir;
  std::string tool = dir / "arch.sh", marker = dir / "ran";
  test::writeFile(tool, "#!/bin/sh\ntouch " + marker + "\necho gfx90a\n");
  ASSERT_EQ(::chmod(tool.c_str(), 0755), 0);
  auto line = cc1LineOfDriverLine({"-fopenmp", "--offload-arch=native", "--offload-arch-tool=" + tool},
                                  "/usr/lib/llvm-22/bin/clang", "/corpus/m.bc");
  if (line)
    ADD_FAILURE() << "planned: " << ::testing::PrintToString(*line);
  else
    llvm::consumeError(line.takeError());
  EXPECT_FALSE(test::exists(marker)) << "the driver ran the corpus' program";
}

// The classification must cover every cc1 option of the clang we link whose
// name, metavar or help speaks of a file, path, directory, plugin or output:
// an option a new LLVM adds fails here instead of passing unscreened.
TEST(CommandLineScreen, EveryFileTakingCc1OptionIsClassified) {
  std::set<std::string> classified;
  for (const FlagRule &rule : commandLineFlagRules())
    classified.insert(rule.Name);
  const llvm::opt::OptTable &table = clang::getDriverOptTable();
  llvm::Regex fileish("file|path|dir|plugin|dsopath|(^| )-?load|output|dump|write|sysroot", llvm::Regex::IgnoreCase);
  std::set<std::string> names, missing;
  size_t checked = 0;
  for (unsigned id = 1; id <= table.getNumOptions(); ++id) {
    llvm::opt::Option option = table.getOption(id);
    names.insert(option.getPrefixedName().str());
    auto kind = option.getKind();
    if (!option.hasVisibilityFlag(clang::options::CC1Option) || option.getAlias().isValid() ||
        kind == llvm::opt::Option::GroupClass || kind == llvm::opt::Option::FlagClass ||
        kind == llvm::opt::Option::InputClass || kind == llvm::opt::Option::UnknownClass)
      continue;
    ++checked;
    std::string described = (option.getPrefixedName() + " " + option.getMetaVar() + " " + option.getHelpText()).str();
    if (fileish.match(described) && !classified.count(option.getPrefixedName().str()))
      missing.insert(option.getPrefixedName().str() + "  [" + option.getMetaVar().str() + "] " +
                     option.getHelpText().str());
  }
  EXPECT_GT(checked, 300u); // the walk saw clang's cc1 value-taking options at all
  EXPECT_TRUE(missing.empty()) << "cc1 options that take a file or plugin and are not classified:\n"
                               << ::testing::PrintToString(missing);
  // And every rule names an option clang has (no typo hides a flag).
  for (const std::string &name : classified)
    EXPECT_TRUE(names.count(name)) << name << " is not an option of clang-22";
}

} // namespace
