// --compile_server={auto,on,off}: whether harvest-logs runs opt and llc in
// mlgo-compile-server's warm children (docs/compile-server.md). The server
// runs the LLVM the tools are built against, so it may stand in only for
// that very opt and llc; the user who points --opt_path at another LLVM
// gets exec, and the reason goes to summary.json.
#pragma once

#include "mlgo/compile/CompilerDriver.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

struct CompileServerRequest {
  std::string Setting = "auto"; // auto, on, off
  CompilerSettings Compiler;
  std::string ServerPath;
  std::string ProbeStderrPath; // the probe server's stderr; "": a temporary file
};

struct CompileServerDecision {
  bool Use = false;
  std::string Reason;
};

/// auto: the server when every tool the run would exec is the LLVM we are
/// built against and the server starts (probed once), else exec with the
/// reason. on: the same checks, but a failing one is an Error. off: exec.
llvm::Expected<CompileServerDecision> chooseCompileServer(const CompileServerRequest &request);

/// llc's own options (not opt's, not LLVM's libraries'): the server's llc
/// does not have them (they would be "Unknown command line argument").
bool isLlcOnlyOption(llvm::StringRef arg);

/// Where harvest-logs looks for the server: <bin>/../lib/mlgo-corpus/.
std::string defaultCompileServerPath();

} // namespace mlgo
