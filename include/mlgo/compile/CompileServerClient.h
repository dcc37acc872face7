// harvest-logs' side of mlgo-compile-server (docs/compile-server.md): one
// server per worker slot, started on first use, restarted when it dies.
// A compile it starts is a child of the harvester (the harvester becomes a
// child subreaper), so the ChildProcess it returns is waited for, timed out
// and killed exactly as an exec'd compiler.
#pragma once

#include "mlgo/support/ChildProcess.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// The server's own failure (it died, or answered nonsense) rather than the
/// compile's: the module is reported as `compile_server_failed`.
class CompileServerError : public llvm::ErrorInfo<CompileServerError> {
public:
  static char ID;
  explicit CompileServerError(std::string message) : Message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << Message; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string Message;
};

struct CompileServerSettings {
  std::string Path;                 // mlgo-compile-server
  std::vector<std::string> Preload; // --preload= (the inliner plugin)
  std::string InlinerPolicy;        // --inliner_policy= (plugin mode)
  std::string StderrPath;           // the server's own stderr
  bool Clang = false;               // --tools=clang: clang's cc1 instead of opt and llc
};

class CompileServerClient {
public:
  explicit CompileServerClient(CompileServerSettings settings) : Settings(std::move(settings)) {}

  /// Starts `options.Argv` as `tool` ("opt" or "llc") in a warm child. A
  /// server that is found dead before the request is restarted once; one
  /// that dies during it is a CompileServerError (a child it may have
  /// started is reaped as our own). Setup failures are the same Errors as
  /// ChildProcess::spawn's.
  /// `codegen`: with "opt", llc's argv, run in the same child on opt's
  /// module (CompileRequest::CodegenArgv).
  llvm::Expected<ChildProcess> spawn(const std::string &tool, const SpawnOptions &options,
                                     const std::vector<std::string> &codegen = {});

  /// Starts the server now (a probe): an Error says why it cannot run.
  llvm::Error start();

  /// The server's peak resident set (VmHWM, kB) so far; 0 when not running.
  long peakRssKb() const;
  /// How many times a server was (re)started.
  unsigned starts() const { return Starts; }

private:
  llvm::Error ensureRunning();
  void stop();

  CompileServerSettings Settings;
  std::optional<ChildProcess> Server;
  unsigned Starts = 0;
  long PeakRssKb = 0;
};

/// Makes this process a child subreaper, so that orphans of its children (a
/// compile server's compile children) become its own; idempotent.
llvm::Error becomeSubreaper();

} // namespace mlgo
