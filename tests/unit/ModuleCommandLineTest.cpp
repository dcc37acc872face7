// The rules for a corpus module's command line: the flags a harvest drops
// (issue 20 #5) and the screening of flags that load code or write files
// (issue 20 #1), checked against clang-22's own option table.
#include "mlgo/corpus/ModuleCommandLine.h"

#include "support/TestSupport.h"

#include "clang/Options/Options.h"
#include "llvm/Option/OptTable.h"
#include "llvm/Option/Option.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Regex.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

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
