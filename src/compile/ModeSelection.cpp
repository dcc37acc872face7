#include "mlgo/compile/ModeSelection.h"

#include "mlgo/compile/CompileConfinement.h"
#include "mlgo/compile/InteractiveSession.h"
#include "mlgo/compile/PluginMode.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>

namespace mlgo {
namespace {

// A caller and an inlinable callee: one decision under any inlining pipeline.
const char ProbeModule[] = "define internal i32 @callee(i32 %x) {\n"
                           "  %y = mul i32 %x, 3\n"
                           "  ret i32 %y\n"
                           "}\n"
                           "define i32 @caller(i32 %x) {\n"
                           "  %y = call i32 @callee(i32 %x)\n"
                           "  ret i32 %y\n"
                           "}\n";

// Why the plugin cannot serve this request at all ("" when it can).
std::string pluginUnsuitable(const ModeRequest &request) {
  if (request.Decisions != Problem::Inliner) {
    // libMLGORegAllocAdvisor.so records the default eviction and priority
    // advisors, and hosts random: and tflite: (the same decisions as the
    // interactive host's). auto keeps those on the interactive channel, whose
    // reward is the remarks proxy: a run's rewards do not change under it.
    PolicySpec::Kind how = request.Policy.How;
    bool hosted =
        how == PolicySpec::Kind::Default || how == PolicySpec::Kind::Random || how == PolicySpec::Kind::TFLite;
    if (hosted && request.Requested == "plugin")
      return "";
    if (how == PolicySpec::Kind::Default)
      return "auto takes the register allocator's plugin for default traces only on a compiler without development "
             "mode";
    if (hosted)
      return "auto takes the register allocator's plugin only for --policy=default; random: and tflite: run there "
             "with --mode=plugin";
    return "the register allocator's plugin hosts only --policy=default, random:P[:SEED] and tflite:DIR; " +
           request.Policy.describe() + " runs on the interactive channel";
  }
  if (request.Policy.How == PolicySpec::Kind::Exec)
    return "exec: policies answer on the interactive channel";
  if (request.Policy.How == PolicySpec::Kind::Model)
    return "model:DIR is development mode's TFLite model";
  return "";
}

} // namespace

const char *modeName(AdvisorMode mode) {
  switch (mode) {
  case AdvisorMode::Interactive:
    return "interactive";
  case AdvisorMode::Development:
    return "development";
  case AdvisorMode::Plugin:
    return "plugin";
  }
  return "interactive";
}

llvm::Error probeInlinerPlugin(const ModeRequest &request, const CompilerCapabilities &caps) {
  if (!llvm::sys::fs::exists(request.PluginPath))
    return llvm::createStringError("%s does not exist", request.PluginPath.c_str());
  if (caps.MajorVersion != inlinerPluginLlvmMajor())
    return llvm::createStringError("%s is LLVM %d and the plugin is built for LLVM %d", request.Tool.c_str(),
                                   caps.MajorVersion, inlinerPluginLlvmMajor());
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("mlgo-plugin-probe", dir))
    return llvm::createStringError(ec, "cannot create a temporary directory: %s", ec.message().c_str());
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dir); });
  std::string module = joinPath(dir, "probe.ll");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(module, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write %s: %s", module.c_str(), ec.message().c_str());
    os << "target triple = \"" << llvm::sys::getDefaultTargetTriple() << "\"\n" << ProbeModule;
  }
  AdvisorSetup advisor;
  advisor.Mode = AdvisorMode::Plugin;
  advisor.PluginPath = request.PluginPath;
  advisor.TrainingLog = joinPath(dir, "probe.log");
  advisor.PluginPolicy = pluginPolicy(request.Policy);
  advisor.ModuleName = "probe";
  ModuleInputs inputs{module, {"-c", "-Oz"}}; // clang: a plain driver command line
  ModuleCommands commands = moduleCommands(request.Compiler, Problem::Inliner, inputs, advisor, dir);
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(request.ProbeTimeoutSeconds * 1000));
  // Confined as a module's compile (CompileConfinement.h): the probe reads
  // the plugin and the policy's model besides its toolchain and its module.
  ReadExecRules readExec = toolReadExecRules(commands.Compile[0]);
  readExec.Readable.push_back(request.PluginPath);
  if (!request.Policy.ModelDir.empty())
    readExec.Readable.push_back(request.Policy.ModelDir);
  CompileJob job{commands.Compile,
                 joinPath(dir, "stderr"),
                 std::chrono::steady_clock::now() + timeout,
                 request.ProbeTimeoutSeconds,
                 dir.str().str(),
                 {},
                 std::move(readExec)};
  CompileOutcome outcome = runCompile(job);
  if (outcome.Result != CompileOutcome::Status::Ok) {
    std::string tail = llvm::StringRef(outcome.StderrTail).trim().str();
    return llvm::createStringError("%s with the plugin failed on a probe module (%s)%s%s", request.Tool.c_str(),
                                   outcome.Detail.c_str(), tail.empty() ? "" : ": ", tail.c_str());
  }
  std::string stderrText = llvm::StringRef(fileTail(job.StderrPath)).trim().str();
  if (!stderrText.empty())
    return llvm::createStringError("%s with the plugin printed to stderr on a probe module: %s", request.Tool.c_str(),
                                   stderrText.c_str());
  size_t decisions = 0;
  if (!llvm::sys::fs::exists(advisor.TrainingLog))
    return llvm::createStringError("the plugin loaded but logged no decision on a probe module (does --passes "
                                   "run the inliner?)");
  if (llvm::Error e = visitLog(advisor.TrainingLog, [&](TrainingLogReader &, TrainingLogReader::Event event) {
        decisions += event == TrainingLogReader::Event::Observation;
        return llvm::Error::success();
      }))
    return llvm::createStringError("the plugin's probe log is not valid: %s", llvm::toString(std::move(e)).c_str());
  if (decisions == 0)
    return llvm::createStringError("the plugin's probe log has no decision");
  return llvm::Error::success();
}

llvm::Expected<ModeChoice> chooseMode(const ModeRequest &request, const CompilerCapabilities &caps) {
  ModeChoice choice;
  const std::string &r = request.Requested;
  if (r == "interactive" || r == "development") {
    choice.Mode = r == "interactive" ? AdvisorMode::Interactive : AdvisorMode::Development;
    choice.Reason = "--mode=" + r;
    return choice;
  }
  // auto, default eviction or priority traces on an LLVM without development
  // mode: the regalloc plugin is the only way to them (the interactive channel
  // sends no default decision), so it is chosen where it is there for this LLVM.
  if (r == "auto" && isRegalloc(request.Decisions) && request.Policy.How == PolicySpec::Kind::Default &&
      !caps.DevelopmentMode && llvm::sys::fs::exists(request.PluginPath) &&
      caps.MajorVersion == inlinerPluginLlvmMajor()) {
    choice.Mode = AdvisorMode::Plugin;
    choice.Reason = std::string("auto: default ") +
                    (request.Decisions == Problem::RegallocPriority ? "priority" : "eviction") + " traces on " +
                    request.Tool + ", which has no development mode, come from " + request.PluginPath;
    return choice;
  }
  std::string unsuitable = pluginUnsuitable(request);
  if (r == "plugin") {
    if (!unsuitable.empty())
      return llvm::createStringError("--mode=plugin: %s", unsuitable.c_str());
    if (!llvm::sys::fs::exists(request.PluginPath))
      return llvm::createStringError("--mode=plugin: %s does not exist (--plugin_path)", request.PluginPath.c_str());
    if (caps.MajorVersion != inlinerPluginLlvmMajor())
      return llvm::createStringError("--mode=plugin: %s is LLVM %d and the plugin is built for LLVM %d",
                                     request.Tool.c_str(), caps.MajorVersion, inlinerPluginLlvmMajor());
    choice.Mode = AdvisorMode::Plugin;
    choice.Reason = "--mode=plugin";
    return choice;
  }
  // auto
  if (unsuitable.empty()) {
    llvm::Error probe = probeInlinerPlugin(request, caps);
    if (!probe) {
      choice.Mode = AdvisorMode::Plugin;
      choice.Reason = "auto: " + request.PluginPath + " loads cleanly into " + request.Tool;
      return choice;
    }
    choice.PluginFallback = llvm::toString(std::move(probe));
    if (request.Policy.How == PolicySpec::Kind::InProcess)
      return llvm::createStringError("--policy=%s runs only inside the compiler, and the plugin cannot be used: %s",
                                     request.Policy.InProcess.c_str(), choice.PluginFallback.c_str());
  } else {
    choice.PluginFallback = unsuitable;
  }
  // Without the plugin: development mode where the compiler has it (a TFLite
  // build, as before the plugin existed), else the interactive channel.
  bool development = request.Policy.How == PolicySpec::Kind::Model || caps.DevelopmentMode;
  choice.Mode = development ? AdvisorMode::Development : AdvisorMode::Interactive;
  choice.Reason = "auto: no plugin (" + choice.PluginFallback + ")";
  return choice;
}

} // namespace mlgo
