#include "mlgo/compile/CompileServerChoice.h"

#include "mlgo/compile/CompileServerClient.h"
#include "mlgo/compile/OwnLlvmTools.h"
#include "mlgo/compile/PluginMode.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"

namespace mlgo {
namespace {

// Starts a server as the harvest would and stops it. What it printed (e.g.
// a tool library that does not load) ends the error, through a temporary
// file when the request names none.
llvm::Error probeServer(const CompileServerRequest &request, bool clang) {
  std::string stderrPath = request.ProbeStderrPath;
  llvm::SmallString<128> temporary;
  if (stderrPath.empty())
    stderrPath = llvm::sys::fs::createTemporaryFile("mlgo-compile-server-probe", "stderr", temporary)
                     ? "/dev/null"
                     : temporary.str().str();
  llvm::Error started = CompileServerClient({request.ServerPath, {}, "", stderrPath, clang}).start();
  if (!temporary.empty())
    llvm::sys::fs::remove(temporary);
  return started;
}

} // namespace

bool isLlcOnlyOption(llvm::StringRef arg) {
  if (!arg.consume_front("-"))
    return false;
  arg.consume_front("-");
  llvm::StringRef name = arg.split('=').first;
  static const char *const LlcOnly[] = {"x",
                                        "M",
                                        "split-dwarf-output",
                                        "split-dwarf-file",
                                        "time-compilations",
                                        "binutils-version",
                                        "preserve-as-comments",
                                        "show-mc-encoding",
                                        "dwarf-directory",
                                        "asm-verbose",
                                        "compile-twice",
                                        "I",
                                        "enable-new-pm",
                                        "passes",
                                        "p",
                                        "run-pass",
                                        "try-experimental-debuginfo-iterators",
                                        "verify-each",
                                        "time-trace",
                                        "time-trace-granularity",
                                        "time-trace-file"};
  for (const char *option : LlcOnly)
    if (name == option)
      return true;
  // -I<dir> and -M<option> are prefix forms (no other LLVM option starts with a capital I or M).
  return arg.starts_with("I") || arg.starts_with("M");
}

std::string defaultCompileServerPath() { return joinPath(dirName(defaultInlinerPluginPath()), "mlgo-compile-server"); }

llvm::Expected<CompileServerDecision> chooseCompileServer(const CompileServerRequest &request) {
  if (request.Setting == "off")
    return CompileServerDecision{false, "--compile_server=off"};
  auto refuse = [&](std::string why) -> llvm::Expected<CompileServerDecision> {
    if (request.Setting == "on")
      return llvm::createStringError("--compile_server=on: %s", why.c_str());
    return CompileServerDecision{false, "not using the compile server: " + why};
  };
  const CompilerSettings &c = request.Compiler;
  if (c.Kind == CompilerKind::Clang) {
    if (std::string why = whyNotOwnLlvmTool("clang_path", c.Clang, "clang"); !why.empty())
      return refuse(why);
    if (llvm::Error e = probeServer(request, /*clang=*/true))
      return refuse(llvm::toString(std::move(e)));
    return CompileServerDecision{true, request.Setting == "on" ? "--compile_server=on"
                                                               : "clang is the LLVM " LLVM_VERSION_STRING
                                                                 " the compile server is built with"};
  }
  if (c.Kind == CompilerKind::Opt)
    if (std::string why = whyNotOwnLlvmTool("opt_path", c.Opt, "opt"); !why.empty())
      return refuse(why);
  if (std::string why = whyNotOwnLlvmTool("llc_path", c.Llc, "llc"); !why.empty())
    return refuse(why);
  std::vector<std::string> llcArgs = c.LlcFlags;
  if (c.Kind == CompilerKind::Llc)
    llcArgs.insert(llcArgs.end(), c.ExtraFlags.begin(), c.ExtraFlags.end());
  for (const std::string &arg : llcArgs)
    if (isLlcOnlyOption(arg))
      return refuse("its llc does not take llc's own option " + arg + " (docs/compile-server.md)");
  if (llvm::Error e = probeServer(request, /*clang=*/false))
    return refuse(llvm::toString(std::move(e)));
  return CompileServerDecision{true, request.Setting == "on" ? "--compile_server=on"
                                                             : "opt and llc are the LLVM " LLVM_VERSION_STRING
                                                               " the compile server is built with"};
}

} // namespace mlgo
