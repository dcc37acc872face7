#include "mlgo/corpus/ModuleCommandLine.h"

#include "mlgo/corpus/CommandLineSection.h"
#include "mlgo/corpus/DriverJob.h"
#include "mlgo/corpus/InertLlvmOptions.h"

#include "clang/Options/Options.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Option/Arg.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Option/OptTable.h"
#include "llvm/Option/Option.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace mlgo {
namespace {

using C = FlagClass;

// Every cc1 option of clang-22 whose name, metavar or help text speaks of a
// file, path, directory, plugin or output, and the driver options a
// global_command_override may hold that load code or write files. Found by
// walking clang's option table (the unit test fails on one left out).
const FlagRule Rules[] = {
    // Code: dlopen, or plugin actions (which only exist once one is loaded).
    {"-load", C::LoadsCode},
    {"-fpass-plugin=", C::LoadsCode},
    {"-plugin", C::LoadsCode},
    {"-add-plugin", C::LoadsCode},
    {"-plugin-arg-", C::LoadsCode},
    {"-fplugin=", C::LoadsCode},     // driver
    {"-fplugin-arg-", C::LoadsCode}, // driver
    {"-B", C::LoadsCode},            // driver: where it finds the programs it runs
    {"--ld-path=", C::LoadsCode},    // driver
    {"-fuse-ld=", C::LoadsCode},     // driver
    // The driver's own set-up: options from another file, another install
    // directory (whose programs it runs), another option syntax.
    {"--config=", C::DriverSetup},
    {"--config-system-dir=", C::DriverSetup},
    {"--config-user-dir=", C::DriverSetup},
    {"-ccc-install-dir", C::DriverSetup},
    {"--driver-mode=", C::DriverSetup},
    {"--offload-arch-tool=", C::DriverSetup}, // a program the driver runs while it plans
    // Files written other than our object.
    {"-o", C::WritesFile},
    {"-stats-file=", C::WritesFile},
    {"-dependency-dot", C::WritesFile},
    {"-diagnostic-log-file", C::WritesFile},
    {"-header-include-file", C::WritesFile},
    {"-module-dependency-dir", C::WritesFile},
    {"-fmodule-output=", C::WritesFile},
    {"-fmodules-cache-path=", C::WritesFile},
    {"-fthin-link-bitcode=", C::WritesFile},
    {"-fverify-debuginfo-preserve-export=", C::WritesFile},
    {"-as-secure-log-file", C::WritesFile},
    {"-analyzer-dump-egraph", C::WritesFile},
    {"-save-temps=", C::WritesFile},
    {"-fixit=", C::WritesFile},
    {"-dumpdir", C::WritesFile},
    {"--symbol-graph-dir=", C::WritesFile},
    {"-working-directory", C::WritesFile}, // moves where relative outputs go
    {"-serialize-diagnostic-file", C::WritesFile},
    {"-opt-record-file", C::WritesFile},
    {"-stack-usage-file", C::WritesFile},
    {"-MF", C::WritesFile},                    // driver
    {"-MJ", C::WritesFile},                    // driver
    {"-serialize-diagnostics", C::WritesFile}, // driver (--serialize-diagnostics)
    // Side outputs that ordinary builds carry (-gsplit-dwarf, -MD, --coverage,
    // -ftime-trace) and that do not change the code: removed.
    {"-split-dwarf-file", C::Dropped},
    {"-split-dwarf-output", C::Dropped},
    {"--warning-suppression-mappings=", C::Dropped},
    {"-dependency-file", C::Dropped},
    {"-coverage-notes-file=", C::Dropped},
    {"-ftime-trace=", C::Dropped},
    // VFS overlays remap header paths, which an IR compile never looks up;
    // all they could do is make clang read another file (and quote it in an
    // error that lands in the journal).
    {"-ivfsoverlay", C::Dropped},
    {"-vfsoverlay", C::Dropped},
    // Inputs.
    {"-ast-merge", C::ReadsInput},
    {"-c-isystem", C::ReadsInput},
    {"-chain-include", C::ReadsInput},
    {"-cxx-isystem", C::ReadsInput},
    {"--embed-dir=", C::CopiesFile},
    {"--extract-api-ignores=", C::ReadsInput},
    {"-fcuda-include-gpubinary", C::CopiesFile},
    {"-fembed-offload-object=", C::CopiesFile}, // embeds the file's bytes in the object
    {"-fmemory-profile-use=", C::ReadsInput},
    {"-fmodule-file=", C::ReadsInput},
    {"-fmodule-map-file=", C::ReadsInput},
    {"-fmodules-embed-all-files", C::ReadsInput},
    {"-fmodules-embed-file=", C::ReadsInput},
    {"-fms-secure-hotpatch-functions-file=", C::ReadsInput},
    {"-fopenmp-host-ir-file-path", C::ReadsInput},
    {"-foverride-record-layout=", C::ReadsInput},
    {"-fprebuilt-module-path=", C::ReadsInput},
    {"-fprofile-instrument-use-path=", C::ReadsInput},
    {"-fprofile-list=", C::ReadsInput},
    {"-fprofile-remapping-file=", C::ReadsInput},
    {"-fprofile-sample-use=", C::ReadsInput},
    {"-frandomize-layout-seed-file=", C::ReadsInput},
    {"-fsanitize-ignorelist=", C::ReadsInput},
    {"-fsanitize-system-ignorelist=", C::ReadsInput},
    {"-fsanitize-coverage-allowlist=", C::ReadsInput},
    {"-fsanitize-coverage-ignorelist=", C::ReadsInput},
    {"-fxray-always-instrument=", C::ReadsInput},
    {"-fxray-attr-list=", C::ReadsInput},
    {"-fxray-never-instrument=", C::ReadsInput},
    {"-F", C::ReadsInput},
    {"-iapinotes-modules", C::ReadsInput},
    {"-idirafter", C::ReadsInput},
    {"-iframeworkwithsysroot", C::ReadsInput},
    {"-iframework", C::ReadsInput},
    {"-imacros", C::ReadsInput},
    {"-include-pch", C::ReadsInput},
    {"-include", C::ReadsInput},
    {"-internal-externc-isystem", C::ReadsInput},
    {"-internal-iframework", C::ReadsInput},
    {"-internal-isystem", C::ReadsInput},
    {"-iprefix", C::ReadsInput},
    {"-iquote", C::ReadsInput},
    {"-isysroot", C::ReadsInput},
    {"-isystem", C::ReadsInput},
    {"-iwithprefixbefore", C::ReadsInput},
    {"-iwithprefix", C::ReadsInput},
    {"-iwithsysroot", C::ReadsInput},
    {"-I", C::ReadsInput},
    {"-mlink-bitcode-file", C::CopiesFile},
    {"-mlink-builtin-bitcode", C::CopiesFile},
    {"-objc-isystem", C::ReadsInput},
    {"-objcxx-isystem", C::ReadsInput},
    {"-remap-file", C::ReadsInput},
    {"-resource-dir", C::ReadsInput},
    {"-code-completion-at", C::ReadsInput},
    // Paths that are only text: embedded in the object, or used by the
    // compiled program when it runs (never by the compiler).
    {"-coverage-data-file=", C::Text},
    {"-fcoverage-compilation-dir=", C::Text},
    {"-fcoverage-prefix-map=", C::Text},
    {"-fdebug-compilation-dir=", C::Text},
    {"-fdebug-prefix-map=", C::Text},
    {"-fdepfile-entry=", C::Text},
    {"-fmacro-prefix-map=", C::Text},
    {"-fmemory-profile=", C::Text},
    {"-fmodules-user-build-path", C::Text},
    {"-fprofile-instrument-path=", C::Text},
    {"-funique-source-file-identifier=", C::Text},
    {"-main-file-name", C::Text},
    {"-object-file-name=", C::Text},
    {"-MQ", C::Text},
    {"-MT", C::Text},
    {"--system-header-prefix=", C::Text},
    {"--no-system-header-prefix=", C::Text},
    {"-pch-through-header=", C::Text},
    {"-fprofile-exclude-files=", C::Text},
    {"-fprofile-filter-files=", C::Text},
    // Values that are not paths at all (the words matched by accident).
    {"-analyzer-output", C::Text},
    {"-ast-dump-all=", C::Text},
    {"-ast-dump-filter", C::Text},
    {"-ast-dump=", C::Text},
    {"-coverage-version=", C::Text},
    {"-dump-minimization-hints=", C::Text},
    {"-fbinutils-version=", C::Text},
    {"-fdiagnostics-hotness-threshold=", C::Text},
    {"-fdiagnostics-misexpect-tolerance=", C::Text},
    {"-fmodules-ignore-macro=", C::Text},
    {"-fmodules-prune-after=", C::Text},
    {"-fno-modules-check-relocated", C::Text},
    {"-fprofile-function-groups=", C::Text},
    {"-fprofile-instrument-use=", C::Text},
    {"-fprofile-instrument=", C::Text},
    {"-fprofile-selected-function-group=", C::Text},
    {"-fprofile-update=", C::Text},
    {"-fsanitize-undefined-strip-path-components=", C::Text},
    {"-ftest-module-file-extension=", C::Text},
    {"-ftime-trace-granularity=", C::Text},
    {"-ftime-trace-verbose", C::Text},
    {"-loader-replaceable-function=", C::Text},
    {"-mdebug-pass", C::Text},
    {"--output-asm-variant=", C::Text},
    {"-preamble-bytes=", C::Text},
    {"-verify=", C::Text},
    // Set by harvest-logs after the corpus' flags.
    {"-x", C::Ours},
    {"-opt-record-format", C::Ours},
    {"-opt-record-passes", C::Ours},
};

const llvm::StringMap<FlagClass> &ruleMap() {
  static const llvm::StringMap<FlagClass> Map = [] {
    llvm::StringMap<FlagClass> m;
    for (const FlagRule &rule : Rules)
      m[rule.Name] = rule.Class;
    return m;
  }();
  return Map;
}

bool isCc1(llvm::ArrayRef<std::string> args) { return !args.empty() && args.front() == "-cc1"; }

struct ParsedLine {
  std::vector<const char *> Argv; // args without a leading -cc1
  size_t Offset = 0;              // 1 when -cc1 was skipped
  llvm::opt::InputArgList List;
  unsigned MissingIndex = 0, MissingCount = 0;
};

ParsedLine parse(llvm::ArrayRef<std::string> args) {
  ParsedLine p;
  p.Offset = isCc1(args) ? 1 : 0;
  for (size_t i = p.Offset; i < args.size(); ++i)
    p.Argv.push_back(args[i].c_str());
  llvm::opt::Visibility visibility(isCc1(args) ? clang::options::CC1Option : clang::options::ClangOption);
  p.List = clang::getDriverOptTable().ParseArgs(p.Argv, p.MissingIndex, p.MissingCount, visibility);
  return p;
}

std::string canonicalName(const llvm::opt::Arg &arg) {
  return arg.getOption().getUnaliasedOption().getPrefixedName().str();
}

// The canonical name of the option at `p.MissingIndex`, which the line ends
// before its value ("" when none is missing): the parser makes no Arg for it.
std::string missingValueOption(const ParsedLine &p, bool cc1) {
  if (p.MissingCount == 0 || p.MissingIndex >= p.Argv.size())
    return "";
  const char *alone[] = {p.Argv[p.MissingIndex], "", "", ""};
  unsigned index = 0, count = 0;
  llvm::opt::Visibility visibility(cc1 ? clang::options::CC1Option : clang::options::ClangOption);
  llvm::opt::InputArgList list = clang::getDriverOptTable().ParseArgs(alone, index, count, visibility);
  return list.size() ? canonicalName(**list.begin()) : "";
}

// The options of the driver that pass their value on as a cc1 or LLVM option.
bool passesOnToCc1(const std::string &name) { return name == "-Xclang" || name == "-Xclang="; }

} // namespace

llvm::ArrayRef<FlagRule> commandLineFlagRules() { return Rules; }

std::vector<std::string> dropHarvestFlags(llvm::ArrayRef<std::string> args) {
  ParsedLine p = parse(args);
  // An argument's fields run from its index to the next argument's: the
  // option table knows how many values each form consumes.
  std::vector<bool> drop(args.size(), false);
  std::vector<unsigned> starts;
  for (const llvm::opt::Arg *arg : p.List)
    starts.push_back(arg->getIndex());
  // A last option without its value ends the parse: it is no argument's value.
  size_t parsedEnd = p.MissingCount ? p.MissingIndex : p.Argv.size();
  if (auto rule = ruleMap().find(missingValueOption(p, isCc1(args)));
      rule != ruleMap().end() && rule->second == FlagClass::Dropped)
    for (size_t i = p.MissingIndex; i < p.Argv.size(); ++i)
      drop[i + p.Offset] = true;
  size_t k = 0;
  for (const llvm::opt::Arg *arg : p.List) {
    unsigned begin = starts[k], end = k + 1 < starts.size() ? starts[k + 1] : parsedEnd;
    ++k;
    auto rule = ruleMap().find(canonicalName(*arg));
    if (rule == ruleMap().end() || rule->second != FlagClass::Dropped)
      continue;
    for (unsigned i = begin; i < end; ++i)
      drop[i + p.Offset] = true;
  }
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i)
    if (!drop[i])
      kept.push_back(args[i]);
  return kept;
}

std::optional<std::string> unsafeLlvmOption(llvm::StringRef value) {
  if (value.starts_with("@"))
    return "-mllvm " + value.str() + " (a response file: LLVM would read options from it)";
  llvm::StringRef name = value.ltrim('-').split('=').first;
  if (name.empty() || !value.starts_with("-"))
    return "-mllvm '" + value.str() + "' is not an LLVM option";
  if (!isInertLlvmOption(name))
    return "-mllvm " + value.str() + " (" + name.str() +
           " is not on the reviewed list of LLVM options a corpus may set: src/corpus/InertLlvmOptions.cpp)";
  if (!llvm::cl::getRegisteredOptions().count(name))
    return "-mllvm " + value.str() + ": not an option of this LLVM (" + name.str() + ")";
  return std::nullopt;
}

namespace {

// Why a flag of class `c` is refused; "" when it is not.
std::string refusal(FlagClass c, const std::string &spelled, llvm::StringRef name) {
  switch (c) {
  case FlagClass::LoadsCode:
    return spelled + " (" + name.str() + " loads code into the compiler)";
  case FlagClass::WritesFile:
    return spelled + " (" + name.str() + " writes a file outside the module's work directory)";
  case FlagClass::CopiesFile:
    return spelled + " (" + name.str() + " puts another file's contents into the object)";
  case FlagClass::DriverSetup:
    return spelled + " (" + name.str() + " changes which programs or options clang's driver uses)";
  default:
    return "";
  }
}

} // namespace

std::vector<std::string> unsafeCommandLineFlags(llvm::ArrayRef<std::string> args) {
  std::vector<std::string> found;
  // clang's main expands every argument that starts with '@' (a value of a
  // separate option too) before it parses anything: the screen would see
  // another line than the one that runs.
  for (const std::string &arg : args)
    if (llvm::StringRef(arg).starts_with("@"))
      found.push_back(arg + " (a response file: clang would read more arguments from it)");
  ParsedLine p = parse(args);
  bool cc1 = isCc1(args);
  // A value that is a whole argument starting with '@' is named above; one
  // inside a joined spelling (-mllvm=@F, -Xclang=@F) is named here.
  auto isWholeResponseFile = [&](const char *value) {
    return llvm::StringRef(value).starts_with("@") && llvm::is_contained(p.Argv, value);
  };
  std::vector<std::string> passedOn = {"-cc1"};
  for (const llvm::opt::Arg *arg : p.List) {
    const llvm::opt::Option option = arg->getOption().getUnaliasedOption();
    std::string name = canonicalName(*arg);
    std::string spelled = arg->getAsString(p.List);
    if (option.getKind() == llvm::opt::Option::UnknownClass) {
      found.push_back("'" + spelled + "' is not a clang-22 " + (cc1 ? "cc1 " : "") + "option");
    } else if (option.getKind() == llvm::opt::Option::InputClass) {
      if (!llvm::StringRef(spelled).starts_with("@")) // already named
        found.push_back("'" + spelled + "' is an input file (harvest-logs gives the module's bitcode itself)");
    } else if (name == "-mllvm") {
      for (const char *value : arg->getValues())
        if (!isWholeResponseFile(value))
          if (auto why = unsafeLlvmOption(value))
            found.push_back(*why);
    } else if (passesOnToCc1(name)) { // screened together below, as the cc1 line they make
      for (const char *value : arg->getValues()) {
        if (isWholeResponseFile(value))
          continue;
        if (llvm::StringRef(value).starts_with("@"))
          found.push_back(spelled + " (a response file: clang would read more arguments from it)");
        else
          passedOn.push_back(value);
      }
    } else if (auto rule = ruleMap().find(name); rule != ruleMap().end()) {
      if (std::string why = refusal(rule->second, spelled, name); !why.empty())
        found.push_back(why);
    }
  }
  if (auto rule = ruleMap().find(missingValueOption(p, cc1)); rule != ruleMap().end())
    if (std::string why = refusal(rule->second, p.Argv[p.MissingIndex], rule->first()); !why.empty())
      found.push_back(why);
  if (passedOn.size() > 1)
    for (std::string &why : unsafeCommandLineFlags(passedOn))
      found.push_back("-Xclang " + why);
  return found;
}

std::optional<std::string> unsafeCommandLineFlag(llvm::ArrayRef<std::string> args) {
  std::vector<std::string> found = unsafeCommandLineFlags(args);
  if (found.empty())
    return std::nullopt;
  return found.front();
}

char UnsafeCommandLineError::ID = 0;

void UnsafeCommandLineError::log(llvm::raw_ostream &os) const {
  os << Source << ": unsafe command line: " << Flag
     << "; harvest-logs runs it only with --trust_corpus_commands (docs/security.md)";
}

llvm::Error screenCommandLine(llvm::ArrayRef<std::string> args, llvm::StringRef source) {
  std::vector<std::string> found = unsafeCommandLineFlags(args);
  if (!found.empty())
    return llvm::make_error<UnsafeCommandLineError>(source.str(), llvm::join(found, "; "));
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::string>> screenedCompileLine(llvm::ArrayRef<std::string> args, llvm::StringRef source,
                                                             llvm::StringRef clangPath, llvm::StringRef input) {
  if (llvm::Error e = screenCommandLine(args, source))
    return std::move(e);
  if (isCc1(args))
    return args.vec();
  auto cc1 = cc1LineOfDriverLine(args, clangPath, input);
  if (!cc1)
    return llvm::make_error<UnsafeCommandLineError>(source.str(), llvm::toString(cc1.takeError()));
  std::vector<std::string> line = dropHarvestFlags(*cc1);
  std::vector<std::string> found = unsafeCommandLineFlags(line);
  if (!found.empty())
    return llvm::make_error<UnsafeCommandLineError>(source.str(),
                                                    "the driver line's cc1 job has " + llvm::join(found, "; "));
  return line;
}

llvm::Expected<std::vector<std::string>> readModuleCommandLine(llvm::StringRef cmdPath) {
  auto buffer = llvm::MemoryBuffer::getFile(cmdPath, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: %s", cmdPath.str().c_str(),
                                   buffer.getError().message().c_str());
  std::vector<std::string> fields;
  for (llvm::StringRef field : splitCommandLineSection((*buffer)->getBuffer()))
    fields.push_back(field.str());
  return dropHarvestFlags(fields);
}

} // namespace mlgo
