// Which entry point runs a request's tool, and the start-up work the server
// does once so that its children do not.
#include "mlgo/server/CompileServer.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/InitializePasses.h"
#include "llvm/PassRegistry.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <unistd.h>

namespace mlgo::server {
namespace {

ToolEntry exported(const char *symbol) {
  return reinterpret_cast<ToolEntry>(llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(symbol));
}

// A cc1 command line (a corpus' embedded one) runs in-process; any other is
// clang's driver, which this server does not host: it is exec'd from the
// child, set up and confined as ever, and costs its start-up as before.
int clangEntry(int argc, char **argv) {
  if (argc >= 2 && std::string(argv[1]) == "-cc1")
    return exported("mlgoClangCc1Main")(argc, argv);
  ::execvp(argv[0], argv); // through PATH, as the exec path runs it
  llvm::errs() << "error: cannot run " << argv[0] << ": " << std::strerror(errno) << "\n";
  return 127;
}

} // namespace

ToolEntry toolEntry(const std::string &tool) {
  // From the tool library the server loaded (ToolLibrary).
  if (tool == "opt")
    return exported("mlgoOptMain");
  if (tool == "llc")
    return exported("mlgoLlcMain");
  if (tool == "clang" && exported("mlgoClangCc1Main"))
    return clangEntry;
  return nullptr;
}

OptThenLlcEntry optThenLlcEntry() {
  return reinterpret_cast<OptThenLlcEntry>(llvm::sys::DynamicLibrary::SearchForAddressOfSymbol("mlgoOptThenLlcMain"));
}

bool warmUp(const std::string &toolLibrary, const std::vector<std::string> &preload, const std::string &inlinerPolicy) {
  using namespace llvm;
  // First: its options register before any plugin's.
  std::string error;
  if (sys::DynamicLibrary::LoadLibraryPermanently(toolLibrary.c_str(), &error)) {
    WithColor::error(errs(), "mlgo-compile-server") << "cannot load " << toolLibrary << ": " << error << "\n";
    return false;
  }
  InitializeAllTargets();
  InitializeAllTargetMCs();
  InitializeAllAsmPrinters();
  InitializeAllAsmParsers();
  PassRegistry &registry = *PassRegistry::getPassRegistry();
  initializeCore(registry);
  initializeScalarOpts(registry);
  initializeVectorization(registry);
  initializeIPO(registry);
  initializeAnalysis(registry);
  initializeTransformUtils(registry);
  initializeInstCombine(registry);
  initializeTarget(registry);
  initializeCodeGen(registry);
  (void)sys::getDefaultTargetTriple();
  (void)sys::getHostCPUName();
  // The tools load a plugin by path; one already loaded is not loaded again,
  // and its static constructors (its options) have run here, once.
  for (const std::string &library : preload) {
    if (sys::DynamicLibrary::LoadLibraryPermanently(library.c_str(), &error))
      WithColor::warning(errs(), "mlgo-compile-server") << "cannot preload " << library << ": " << error << "\n";
  }
  // The inliner plugin's policy (a TFLite model) made once, for every child.
  if (!inlinerPolicy.empty()) {
    using Prepare = const char *(*)(const char *);
    auto prepare = reinterpret_cast<Prepare>(sys::DynamicLibrary::SearchForAddressOfSymbol("mlgoInlinerPreparePolicy"));
    const char *why = prepare ? prepare(inlinerPolicy.c_str()) : "no preloaded inliner plugin";
    if (*why)
      WithColor::warning(errs(), "mlgo-compile-server")
          << "cannot prepare the inliner policy " << inlinerPolicy << " (each compile makes its own): " << why << "\n";
  }
  return true;
}

} // namespace mlgo::server
