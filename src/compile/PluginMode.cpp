#include "mlgo/compile/PluginMode.h"

#include "mlgo/support/PathUtil.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"

#include <cstdio>

namespace mlgo {

const char *const InlinerPluginName = "libMLGOInlineAdvisor.so";

int inlinerPluginLlvmMajor() { return LLVM_VERSION_MAJOR; } // built by the same CMake, against the same LLVM

std::string defaultInlinerPluginPath() {
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  return joinPath(joinPath(joinPath(dirName(dirName(exe)), "lib"), "mlgo-corpus"), InlinerPluginName);
}

const char *const RegallocPluginName = "libMLGORegAllocAdvisor.so";

std::string defaultRegallocPluginPath() { return joinPath(dirName(defaultInlinerPluginPath()), RegallocPluginName); }

std::vector<std::string> pluginAdvisorFlags(const AdvisorSetup &advisor, bool clang, Problem problem) {
  if (isRegalloc(problem)) { // -load (llc's, or cc1's) loads it before the plugin's own option is parsed
    std::vector<std::string> options = {
        (problem == Problem::RegallocPriority ? "-mlgo-regalloc-priority-log=" : "-mlgo-regalloc-log=") +
        advisor.TrainingLog};
    // A hosted policy (random:, tflite:) decides in the compiler, seeded by the module's corpus name.
    if (!advisor.PluginPolicy.empty() && advisor.PluginPolicy != "default")
      options.insert(options.end(),
                     {"-mlgo-regalloc-policy=" + advisor.PluginPolicy, "-mlgo-regalloc-module=" + advisor.ModuleName});
    std::vector<std::string> flags = {"-load", advisor.PluginPath};
    for (std::string &option : options) {
      if (clang)
        flags.push_back("-mllvm");
      flags.push_back(std::move(option));
    }
    return flags;
  }
  std::vector<std::string> flags = {(clang ? "-fpass-plugin=" : "-load-pass-plugin=") + advisor.PluginPath};
  // opt loads the plugin while it parses its arguments, so the plugin's own
  // options must come after -load-pass-plugin.
  std::vector<std::string> options = {"-mlgo-inliner-log=" + advisor.TrainingLog,
                                      "-mlgo-inliner-policy=" + advisor.PluginPolicy,
                                      "-mlgo-inliner-module=" + advisor.ModuleName};
  if (!advisor.SitesFile.empty())
    options.push_back("-mlgo-inliner-sites=" + advisor.SitesFile);
  for (std::string &option : options) {
    if (clang)
      flags.push_back("-mllvm");
    flags.push_back(std::move(option));
  }
  return flags;
}

std::string pluginPolicy(const PolicySpec &policy) {
  switch (policy.How) {
  case PolicySpec::Kind::Default:
    return "default";
  case PolicySpec::Kind::Random: {
    char probability[32];
    std::snprintf(probability, sizeof(probability), "%.17g", policy.Probability); // exactly the parsed double
    return std::string("random:") + probability + ":" + std::to_string(policy.Seed);
  }
  case PolicySpec::Kind::InProcess:
    return policy.InProcess;
  case PolicySpec::Kind::TFLite: {
    // The compiler runs in the module's work directory: hand it an absolute path.
    llvm::SmallString<256> dir(policy.ModelDir);
    llvm::sys::fs::make_absolute(dir);
    return "tflite:" + dir.str().str();
  }
  case PolicySpec::Kind::Replay:
    // Per module: the harvest hands each compile its own trajectory
    // (Policy::pluginPolicyForModule); the probe and the compile server's
    // prepared policy are the default's.
    return "default";
  case PolicySpec::Kind::Exec:
  case PolicySpec::Kind::Model:
    return "";
  }
  return "";
}

void explainPluginFailure(CompileOutcome &outcome, llvm::StringRef pluginPath) {
  if (outcome.Result != CompileOutcome::Status::Failed || outcome.Reason != "compiler_failed")
    return;
  const std::string &err = outcome.StderrTail;
  // opt: "Could not load library '...'" or "Failed to load passes from '...'";
  // clang: "unable to load plugin '...'";
  // the plugin's own fatal errors start with its name.
  for (const char *marker : {"Could not load library", "Failed to load passes from", "unable to load plugin",
                             "Wrong API version", "libMLGOInlineAdvisor", "mlgo-regalloc:"}) {
    size_t at = err.find(marker);
    if (at == std::string::npos)
      continue;
    size_t begin = err.rfind('\n', at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    size_t end = err.find('\n', at);
    outcome.Reason = "plugin_failed";
    outcome.Detail += "; the plugin " + pluginPath.str() + " failed: " + err.substr(begin, end - begin);
    return;
  }
}

} // namespace mlgo
