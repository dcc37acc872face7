// Which advisor mode a harvest runs in, and why: --mode=auto prefers the
// in-process plugin when it loads cleanly into the compiler, then the
// development mode where the compiler has it, then the interactive channel.
#pragma once

#include "mlgo/compile/CompilerDriver.h"
#include "mlgo/log/Problem.h"
#include "mlgo/policy/Policy.h"

#include "llvm/Support/Error.h"

#include <string>

namespace mlgo {

struct ModeRequest {
  std::string Requested = "auto"; // auto, interactive, development, plugin
  Problem Decisions = Problem::Inliner;
  CompilerSettings Compiler;
  PolicySpec Policy;
  std::string PluginPath;
  std::string Tool; // the compiler that runs the advisor (opt or clang)
  double ProbeTimeoutSeconds = 30;
};

struct ModeChoice {
  AdvisorMode Mode = AdvisorMode::Interactive;
  std::string Reason;         // why this mode, for the first log line and summary.json
  std::string PluginFallback; // auto without the plugin: why it could not be used ("" otherwise)
};

const char *modeName(AdvisorMode mode);

/// Whether the plugin at `request.PluginPath` works in `request.Tool`: the
/// same LLVM major version, and a compile of a two-function module that
/// exits cleanly and logs a decision. The Error says what failed.
llvm::Error probeInlinerPlugin(const ModeRequest &request, const CompilerCapabilities &caps);

/// The mode to run. Errors: an explicit --mode the request cannot use (the
/// plugin for regalloc or for an exec:/model: policy, a compiler of another
/// LLVM version, a missing plugin file; an in-process policy without the plugin).
llvm::Expected<ModeChoice> chooseMode(const ModeRequest &request, const CompilerCapabilities &caps);

} // namespace mlgo
