#include "mlgo/compile/CompilerDriver.h"

#include "mlgo/compile/CompileConfinement.h"
#include "mlgo/compile/OwnLlvmTools.h"
#include "mlgo/compile/PluginMode.h"
#include "mlgo/support/ChildProcess.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <regex>
#include <unistd.h>

namespace mlgo {
namespace {

std::vector<std::string> advisorFlags(Problem problem, const AdvisorSetup &advisor) {
  if (!advisor.Enabled)
    return {};
  bool interactive = advisor.Mode == AdvisorMode::Interactive;
  switch (problem) {
  case Problem::Inliner:
    if (interactive)
      return {"-enable-ml-inliner=release", "-inliner-interactive-channel-base=" + advisor.ChannelBase,
              "-inliner-interactive-include-default"};
    if (advisor.ModelDir.empty())
      return {"-enable-ml-inliner=development", "-training-log=" + advisor.TrainingLog};
    return {"-enable-ml-inliner=development", "-training-log=" + advisor.TrainingLog,
            "-ml-inliner-model-under-training=" + advisor.ModelDir};
  case Problem::RegallocEvict:
    if (interactive)
      return {"-regalloc-enable-advisor=release", "-regalloc-evict-interactive-channel-base=" + advisor.ChannelBase};
    if (advisor.ModelDir.empty())
      return {"-regalloc-enable-advisor=development", "-regalloc-training-log=" + advisor.TrainingLog};
    return {"-regalloc-enable-advisor=development", "-regalloc-training-log=" + advisor.TrainingLog,
            "-regalloc-model=" + advisor.ModelDir};
  case Problem::RegallocPriority:
    if (interactive)
      return {"-regalloc-enable-priority-advisor=release",
              "-regalloc-priority-interactive-channel-base=" + advisor.ChannelBase};
    if (advisor.ModelDir.empty())
      return {"-regalloc-enable-priority-advisor=development",
              "-regalloc-priority-training-log=" + advisor.TrainingLog};
    return {"-regalloc-enable-priority-advisor=development", "-regalloc-priority-training-log=" + advisor.TrainingLog,
            "-regalloc-priority-model=" + advisor.ModelDir};
  }
  return {};
}

// The inliner asks for callee_embedding and caller_embedding only with both
// flags: the first enables the features, the second is what the IR2Vec
// analysis reads (LLVM 22 refuses the first alone).
std::vector<std::string> ir2vecFlags(Problem problem, const AdvisorSetup &advisor) {
  if (!advisor.Enabled || problem != Problem::Inliner || advisor.IR2VecVocab.empty())
    return {};
  std::vector<std::string> flags = {"-ml-inliner-ir2vec-vocab-file=" + advisor.IR2VecVocab,
                                    "-ir2vec-vocab-path=" + advisor.IR2VecVocab};
  if (!advisor.IR2VecKind.empty())
    flags.push_back("-ir2vec-kind=" + advisor.IR2VecKind);
  return flags;
}

void addAdvisorFlags(std::vector<std::string> &argv, Problem problem, const AdvisorSetup &advisor, bool viaMllvm) {
  std::vector<std::string> flags;
  if (advisor.Enabled && advisor.Mode == AdvisorMode::Plugin) {
    std::vector<std::string> plugin = pluginAdvisorFlags(advisor, /*clang=*/viaMllvm, problem);
    argv.insert(argv.end(), plugin.begin(), plugin.end());
  } else {
    flags = advisorFlags(problem, advisor);
  }
  for (std::string &flag : ir2vecFlags(problem, advisor))
    flags.push_back(std::move(flag));
  for (std::string &flag : flags) {
    if (viaMllvm)
      argv.push_back("-mllvm");
    argv.push_back(std::move(flag));
  }
}

} // namespace

ModuleCommands moduleCommands(const CompilerSettings &settings, Problem problem, const ModuleInputs &inputs,
                              const AdvisorSetup &advisor, llvm::StringRef workDir) {
  ModuleCommands commands;
  commands.Native = joinPath(workDir, "native.o");
  bool regalloc = isRegalloc(problem);
  if (regalloc)
    commands.Remarks = joinPath(workDir, "regalloc-remarks.yaml");
  switch (settings.Kind) {
  case CompilerKind::Opt: {
    commands.Optimized = joinPath(workDir, "optimized.bc");
    commands.Compile = {settings.Opt, "-passes=" + settings.Passes};
    addAdvisorFlags(commands.Compile, problem, advisor, /*viaMllvm=*/false);
    commands.Compile.insert(commands.Compile.end(), settings.ExtraFlags.begin(), settings.ExtraFlags.end());
    commands.Compile.insert(commands.Compile.end(), {inputs.Bitcode, "-o", commands.Optimized});
    std::vector<std::string> llc = {settings.Llc};
    llc.insert(llc.end(), settings.LlcFlags.begin(), settings.LlcFlags.end());
    llc.insert(llc.end(), {"-filetype=obj", commands.Optimized, "-o", commands.Native});
    commands.Codegen = std::move(llc);
    return commands;
  }
  case CompilerKind::Llc:
    commands.Compile = {settings.Llc};
    commands.Compile.insert(commands.Compile.end(), settings.LlcFlags.begin(), settings.LlcFlags.end());
    if (regalloc)
      commands.Compile.insert(commands.Compile.end(), {"-regalloc=greedy", "-pass-remarks-output=" + commands.Remarks,
                                                       "-pass-remarks-filter=regalloc"});
    addAdvisorFlags(commands.Compile, problem, advisor, /*viaMllvm=*/false);
    commands.Compile.insert(commands.Compile.end(), settings.ExtraFlags.begin(), settings.ExtraFlags.end());
    commands.Compile.insert(commands.Compile.end(), {"-filetype=obj", inputs.Bitcode, "-o", commands.Native});
    return commands;
  case CompilerKind::Clang:
    // The module's own command line, as ml-compiler-opt compiles it.
    commands.Compile = {settings.Clang};
    commands.Compile.insert(commands.Compile.end(), inputs.CommandLine.begin(), inputs.CommandLine.end());
    addAdvisorFlags(commands.Compile, problem, advisor, /*viaMllvm=*/true);
    if (regalloc)
      commands.Compile.insert(commands.Compile.end(), {"-opt-record-file", commands.Remarks, "-opt-record-passes",
                                                       "regalloc", "-opt-record-format", "yaml"});
    commands.Compile.insert(commands.Compile.end(), settings.ExtraFlags.begin(), settings.ExtraFlags.end());
    // A driver line (trusted: the screen runs others as their cc1 job)
    // would also link: a compile never does, and its confinement could not
    // run the linker (docs/security.md).
    if (inputs.CommandLine.empty() || inputs.CommandLine.front() != "-cc1")
      commands.Compile.push_back("-c");
    commands.Compile.insert(commands.Compile.end(), {"-x", "ir", inputs.Bitcode, "-o", commands.Native});
    return commands;
  }
  return commands;
}

std::string trainingLogOption(Problem problem) {
  return problem == Problem::Inliner         ? "training-log"
         : problem == Problem::RegallocEvict ? "regalloc-training-log"
                                             : "regalloc-priority-training-log";
}

llvm::Expected<CompilerCapabilities> probeCompiler(llvm::StringRef path, CompilerKind kind, Problem problem) {
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("mlgo-probe", dir))
    return llvm::createStringError(ec, "cannot create a temporary directory: %s", ec.message().c_str());
  auto cleanup = llvm::make_scope_exit([&] { llvm::sys::fs::remove_directories(dir); });
  // Both questions at once: each is a start-up of the compiler, on the
  // harvest's critical path.
  std::vector<std::string> version = {path.str(), "--version"}, help = {path.str()};
  if (kind == CompilerKind::Clang)
    help.insert(help.end(), {"-cc1", "-mllvm"}); // the driver's --help does not list LLVM's options
  help.push_back("--help-hidden");
  std::string versionOut = joinPath(dir, "version.out"), helpOut = joinPath(dir, "help.out");
  auto start = [&](std::vector<std::string> argv, const std::string &out) {
    SpawnOptions spawn{std::move(argv), out, joinPath(dir, "err")};
    spawn.ConfineWritesTo = dir.str().str();
    spawn.ReadExec = toolReadExecRules(path.str());
    return ChildProcess::spawn(spawn);
  };
  auto versionChild = start(version, versionOut);
  if (!versionChild)
    return versionChild.takeError();
  auto helpChild = start(help, helpOut);
  if (!helpChild)
    return helpChild.takeError();
  ExitStatus versionStatus = versionChild->wait();
  helpChild->wait();

  CompilerCapabilities caps;
  if (!versionStatus.ok())
    return llvm::createStringError("%s --version failed (%s): is it an LLVM tool?", path.str().c_str(),
                                   versionStatus.describe().c_str());
  std::string text = fileTail(versionOut, 1 << 22);
  std::smatch m;
  static const std::regex Version("(LLVM|clang) version (\\d+)");
  if (std::regex_search(text, m, Version))
    caps.MajorVersion = std::stoi(m[2]);
  caps.DevelopmentMode = fileTail(helpOut, 1 << 22).find("-" + trainingLogOption(problem) + "=") != std::string::npos;
  return caps;
}

llvm::Expected<CompilerCapabilities> compilerCapabilities(const std::string &path, CompilerKind kind, Problem problem) {
  const char *tool = kind == CompilerKind::Opt ? "opt" : kind == CompilerKind::Llc ? "llc" : "clang";
  if (!isOwnLlvmTool(path, tool))
    return probeCompiler(path, kind, problem);
  // It runs the libLLVM this process has loaded: its options are ours.
  CompilerCapabilities caps;
  caps.MajorVersion = LLVM_VERSION_MAJOR;
  caps.DevelopmentMode = llvm::cl::getRegisteredOptions().count(trainingLogOption(problem)) != 0;
  return caps;
}

} // namespace mlgo
