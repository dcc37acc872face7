// Which entry point runs a request's tool, and the start-up work the server
// does once so that its children do not.
#include "mlgo/server/CompileServer.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/InitializePasses.h"
#include "llvm/PassRegistry.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/WithColor.h"
#include "llvm/TargetParser/Host.h"

#include <functional>

namespace llvm {
class PassBuilder;
}

// opt's own main, from Debian's libLLVMOptDriver.a (llvm-22-dev; no header).
extern "C" int optMain(int argc, char **argv,
                       llvm::ArrayRef<std::function<void(llvm::PassBuilder &)>> passBuilderCallbacks);

namespace mlgo::server {

ToolEntry llcEntry();

namespace {
int optEntry(int argc, char **argv) { return optMain(argc, argv, {}); }
} // namespace

ToolEntry toolEntry(const std::string &tool) {
  if (tool == "opt")
    return optEntry;
  if (tool == "llc")
    return llcEntry();
  return nullptr;
}

void warmUp(const std::vector<std::string> &preload, const std::string &inlinerPolicy) {
  using namespace llvm;
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
    std::string error;
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
}

} // namespace mlgo::server
