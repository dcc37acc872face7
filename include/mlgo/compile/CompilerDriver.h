// compile/: how one module is compiled under a policy (command lines, the
// capability probe, confinement, the interactive host, the plugin's flags,
// the compile server); knows nothing of corpora or harvests.
// The command lines a harvest runs for one module, per compiler and mode.
#pragma once

#include "mlgo/corpus/ModuleCommandLine.h" // readModuleCommandLine
#include "mlgo/log/Problem.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlgo {

enum class CompilerKind { Opt, Clang, Llc };
enum class AdvisorMode { Interactive, Development, Plugin };

struct CompilerSettings {
  CompilerKind Kind = CompilerKind::Opt;
  std::string Opt = "opt-22", Llc = "llc-22", Clang = "clang-22";
  std::string Passes = "default<Oz>";
  std::vector<std::string> LlcFlags = {"-O2"};
  std::vector<std::string> ExtraFlags; // appended to the optimizing command
};

/// One module's inputs: its bitcode and, for clang, its cc1 command line
/// (from <name>.cmd, or the corpus' global_command_override).
struct ModuleInputs {
  std::string Bitcode;
  std::vector<std::string> CommandLine;
};

/// What the advisor is told: interactive channel, development-mode log, or
/// the in-process plugin (PluginMode.h) with its log and policy.
struct AdvisorSetup {
  AdvisorMode Mode = AdvisorMode::Interactive;
  std::string ChannelBase;                          // interactive
  std::string TrainingLog;                          // development and plugin
  std::string PluginPath, PluginPolicy, ModuleName; // plugin
  std::string SitesFile;                            // plugin: each decision's call site (--decision_sites)
  std::string ModelDir;                             // development with a model
  /// The inliner's IR2Vec embedding features (--ir2vec_vocab): the vocabulary
  /// file and the embedding kind ("" = LLVM's default).
  std::string IR2VecVocab, IR2VecKind;
  bool Enabled = true; // false: the ordinary inliner (baseline sizes, benchmarks)
};

struct ModuleCommands {
  std::vector<std::string> Compile;                // opt (to Optimized), clang or llc (to Native)
  std::optional<std::vector<std::string>> Codegen; // llc, after opt
  std::string Optimized, Native;
  std::string Remarks; // regalloc: the allocator's optimization remarks (YAML)
};

/// The command lines for one module and problem; outputs go into `workDir`.
/// Regalloc runs through clang or llc (opt has no register allocator).
ModuleCommands moduleCommands(const CompilerSettings &settings, Problem problem, const ModuleInputs &inputs,
                              const AdvisorSetup &advisor, llvm::StringRef workDir);

/// What the compiler at `path` supports, probed once.
struct CompilerCapabilities {
  int MajorVersion = 0;         // from --version; 0 when unknown
  bool DevelopmentMode = false; // --help-hidden lists the problem's training-log flag
};
/// clang is probed through `-cc1 -mllvm --help-hidden`.
llvm::Expected<CompilerCapabilities> probeCompiler(llvm::StringRef path, CompilerKind kind, Problem problem);
/// The probe's answer, without starting the compiler when it is our own
/// LLVM's (OwnLlvmTools.h): two start-ups off every harvest's critical path.
llvm::Expected<CompilerCapabilities> compilerCapabilities(const std::string &path, CompilerKind kind, Problem problem);
/// The development-mode option that writes `problem`'s training log.
std::string trainingLogOption(Problem problem);

} // namespace mlgo
