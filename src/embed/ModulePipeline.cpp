#include "mlgo/embed/ModulePipeline.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <mutex>

namespace mlgo {
namespace {

// Error diagnostics are collected instead of LLVM's default of printing
// them and exiting the process.
void collect(const llvm::DiagnosticInfo *info, void *context) {
  if (info->getSeverity() != llvm::DS_Error)
    return;
  llvm::raw_string_ostream os(*static_cast<std::string *>(context));
  llvm::DiagnosticPrinterRawOStream printer(os);
  info->print(printer);
  os << "; ";
}

void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
  });
}

} // namespace

LoadedModule::~LoadedModule() { Module.reset(); }

llvm::Expected<std::unique_ptr<LoadedModule>> LoadedModule::loadAfter(llvm::StringRef path, llvm::StringRef passes) {
  auto loaded = load(path);
  if (!loaded || passes.empty())
    return loaded;
  if (llvm::Error e = (*loaded)->runPipeline(passes))
    return std::move(e);
  return loaded;
}

llvm::Expected<std::unique_ptr<LoadedModule>> LoadedModule::load(llvm::StringRef path) {
  std::unique_ptr<LoadedModule> loaded(new LoadedModule());
  loaded->Path = path.str();
  loaded->Context.setDiagnosticHandlerCallBack(collect, &loaded->Diagnostics);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: cannot read: %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  auto module = llvm::parseBitcodeFile((*buffer)->getMemBufferRef(), loaded->Context);
  if (!module)
    return llvm::createStringError("%s: not bitcode LLVM 22 reads: %s", path.str().c_str(),
                                   llvm::toString(module.takeError()).c_str());
  if (!loaded->Diagnostics.empty())
    return llvm::createStringError("%s: %s", path.str().c_str(), loaded->Diagnostics.c_str());
  loaded->Module = std::move(*module);
  return loaded;
}

llvm::Error LoadedModule::runPipeline(llvm::StringRef passes) {
  initializeTargets();
  std::unique_ptr<llvm::TargetMachine> machine;
  std::string error;
  const llvm::Triple &triple = Module->getTargetTriple();
  if (const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error))
    machine.reset(target->createTargetMachine(triple, "", "", llvm::TargetOptions(), std::nullopt));
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  // opt's instrumentation: without it optnone functions (all of a -O0
  // corpus) would be optimized, which opt-22 never does.
  llvm::PassInstrumentationCallbacks instrumentation;
  llvm::StandardInstrumentations standard(Context, /*DebugLogging=*/false);
  standard.registerCallbacks(instrumentation, &modules);
  llvm::PassBuilder builder(machine.get(), llvm::PipelineTuningOptions(), std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager pipeline;
  if (llvm::Error e = builder.parsePassPipeline(pipeline, passes))
    return llvm::createStringError("pipeline '%s': %s", passes.str().c_str(), llvm::toString(std::move(e)).c_str());
  pipeline.run(*Module, modules);
  if (!Diagnostics.empty())
    return llvm::createStringError("%s: the pipeline failed: %s", Path.c_str(), Diagnostics.c_str());
  return llvm::Error::success();
}

} // namespace mlgo
