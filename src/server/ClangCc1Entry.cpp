// clang's cc1 in the compile server's child (libMLGOClangCc1.so, preloaded
// by the server only for harvests that compile with clang: it links
// libclang-cpp, 38 MB of code that opt and llc runs need not map). It does
// what clang-22 does with "-cc1" as its first argument: the invocation from
// the arguments, clang's resource directory, the diagnostics, LLVM's fatal
// errors reported as clang reports them, then the frontend action. Every
// output is the one clang-22 writes (tests/e2e/CompileServerTest.cpp).
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticFrontend.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/CodeGen/ObjectFilePCHContainerWriter.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticBuffer.h"
#include "clang/FrontendTool/Utils.h"
#include "clang/Options/OptionUtils.h"
#include "clang/Serialization/ObjectFilePCHContainerReader.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/BuryPointer.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <unistd.h>

using namespace clang;

namespace {

// As clang's: an LLVM fatal error is a compiler error (exit 1), not a crash
// (70 when clang was asked for crash diagnostics).
void reportFatalError(void *userData, const char *message, bool genCrashDiag) {
  auto &diags = *static_cast<DiagnosticsEngine *>(userData);
  diags.Report(diag::err_fe_error_backend) << message;
  llvm::sys::RunInterruptHandlers();
  ::_exit(genCrashDiag ? 70 : 1);
}

std::string realPath(const char *program) {
  std::string path = program;
  if (path.find('/') == std::string::npos)
    if (auto found = llvm::sys::findProgramByName(path))
      path = *found;
  llvm::SmallString<256> real;
  return llvm::sys::fs::real_path(path, real) ? path : std::string(real);
}

int cc1(llvm::ArrayRef<const char *> args, const char *argv0) {
  auto pchOperations = std::make_shared<PCHContainerOperations>();
  pchOperations->registerWriter(std::make_unique<ObjectFilePCHContainerWriter>());
  pchOperations->registerReader(std::make_unique<ObjectFilePCHContainerReader>());

  // Argument errors are buffered until the real diagnostics exist.
  DiagnosticOptions bufferedOptions;
  auto *buffer = new TextDiagnosticBuffer;
  DiagnosticsEngine parseDiagnostics(DiagnosticIDs::create(), bufferedOptions, buffer);
  auto invocation = std::make_shared<CompilerInvocation>();
  bool ok = CompilerInvocation::CreateFromArgs(*invocation, args, parseDiagnostics, argv0);
  auto clang = std::make_unique<CompilerInstance>(std::move(invocation), std::move(pchOperations));
  if (clang->getHeaderSearchOpts().UseBuiltinIncludes && clang->getHeaderSearchOpts().ResourceDir.empty())
    // Beside the clang the exec path runs, not beside this process (the server).
    clang->getHeaderSearchOpts().ResourceDir = GetResourcesPath(realPath(argv0));
  clang->createVirtualFileSystem(llvm::vfs::getRealFileSystem(), buffer);
  clang->createDiagnostics();
  llvm::install_fatal_error_handler(reportFatalError, &clang->getDiagnostics());
  buffer->FlushDiagnostics(clang->getDiagnostics());
  if (!ok)
    return 1;
  ok = ExecuteCompilerInvocation(clang.get());
  if (clang->getFrontendOpts().DisableFree) {
    // As clang: nothing is destroyed but the diagnostic consumer.
    clang->getDiagnosticClient().~DiagnosticConsumer();
    llvm::BuryPointer(std::move(clang));
  }
  return !ok;
}

} // namespace

/// `clang-22 -cc1 ARGS...` in-process: argv[0] is the clang the exec path
/// would run (it locates the resource directory), argv[1] is "-cc1", which
/// clang's driver hands on (an embedded command line starts with it).
extern "C" __attribute__((visibility("default"))) int mlgoClangCc1Main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv); // clang's signal handlers and stack traces
  llvm::ArrayRef<const char *> args(const_cast<const char **>(argv) + 1, static_cast<size_t>(argc - 1));
  return cc1(args, argv[0]);
}
