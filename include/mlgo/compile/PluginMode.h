// Plugin mode: the compiler loads libMLGOInlineAdvisor.so, which decides and
// logs every inlining decision in-process (src/plugin/); harvest-logs only
// runs the compile and keeps the log.
#pragma once

#include "mlgo/compile/CompilerDriver.h"
#include "mlgo/compile/InteractiveSession.h"
#include "mlgo/policy/Policy.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlgo {

/// The plugin's file name, and the LLVM major version it is built for.
extern const char *const InlinerPluginName;
int inlinerPluginLlvmMajor();

/// Next to the running executable: <bin>/../lib/mlgo-corpus/libMLGOInlineAdvisor.so
/// (the build tree and the install tree both have this layout).
std::string defaultInlinerPluginPath();

/// The codegen plugin that records default eviction and priority traces under
/// llc or clang (src/plugin/RegAllocAdvisorPlugin.cpp), beside the inliner plugin.
extern const char *const RegallocPluginName;
std::string defaultRegallocPluginPath();

/// The flags that load the plugin and set its log, policy and module name:
/// opt: -load-pass-plugin=P -mlgo-inliner-...; clang: -fpass-plugin=P and
/// the options through -mllvm. Regalloc: -load P -mlgo-regalloc-log=L (priority:
/// -mlgo-regalloc-priority-log=L; clang's cc1: the option through -mllvm).
std::vector<std::string> pluginAdvisorFlags(const AdvisorSetup &advisor, bool clang,
                                            Problem problem = Problem::Inliner);

/// The plugin's -mlgo-inliner-policy for a policy spec, or "" when the
/// policy cannot run in-process (exec:, model:).
std::string pluginPolicy(const PolicySpec &policy);

/// A failed plugin-mode compile whose stderr shows that the plugin did not
/// load or failed inside becomes `plugin_failed`, with the compiler's words.
void explainPluginFailure(CompileOutcome &outcome, llvm::StringRef pluginPath);

} // namespace mlgo
