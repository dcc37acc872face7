#include "mlgo/embed/MachinePipeline.h"

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/CodeGen/CommandFlags.h"
#include "llvm/CodeGen/MachineFunction.h"
#include "llvm/CodeGen/MachineFunctionPass.h"
#include "llvm/CodeGen/MachineModuleInfo.h"
#include "llvm/CodeGen/Passes.h"
#include "llvm/CodeGen/TargetPassConfig.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/InitializePasses.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>
#include <optional>

namespace mlgo {
namespace {

// llc's option defaults (CPU, features, target options, relocation and code
// model) are read from its codegen flags, so they are registered, unparsed,
// once; -stop-before is the option TargetPassConfig reads its end from, and
// nothing else in this process runs codegen.
llvm::Error initializeCodeGenOnce() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::PassRegistry &registry = *llvm::PassRegistry::getPassRegistry();
    llvm::initializeCore(registry);
    llvm::initializeCodeGen(registry);
    llvm::initializeScalarOpts(registry);
    llvm::initializeVectorization(registry);
    llvm::initializeTransformUtils(registry);
    llvm::initializeTarget(registry);
    static llvm::codegen::RegisterCodeGenFlags flags;
    auto *stopBefore =
        static_cast<llvm::cl::opt<std::string> *>(llvm::cl::getRegisteredOptions().lookup("stop-before"));
    if (!stopBefore)
      failure = "this libLLVM has no -stop-before option";
    else
      stopBefore->setValue("greedy");
  });
  if (!failure.empty())
    return llvm::createStringError("%s", failure.c_str());
  return llvm::Error::success();
}

// The last pass before greedy would be: each machine function as llc-22
// -stop-before=greedy prints it.
class VisitMachineFunctions : public llvm::MachineFunctionPass {
public:
  static char ID;
  VisitMachineFunctions(MachineFunctionVisitor visit, std::optional<llvm::Error> &failure)
      : MachineFunctionPass(ID), Visit(visit), Failure(failure) {}
  bool runOnMachineFunction(llvm::MachineFunction &function) override {
    if (!Failure)
      if (llvm::Error e = Visit(function))
        Failure = std::move(e);
    return false;
  }
  void getAnalysisUsage(llvm::AnalysisUsage &usage) const override {
    usage.setPreservesAll();
    MachineFunctionPass::getAnalysisUsage(usage);
  }
  llvm::StringRef getPassName() const override { return "mlgo: machine functions at the register allocator's input"; }

private:
  MachineFunctionVisitor Visit;
  std::optional<llvm::Error> &Failure;
};

char VisitMachineFunctions::ID = 0;

} // namespace

llvm::Error compileToRegisterAllocation(LoadedModule &loaded, MachineFunctionVisitor visit) {
  if (llvm::Error e = initializeCodeGenOnce())
    return e;
  llvm::Module &module = loaded.module();
  const std::string &path = loaded.path();
  // llc refuses a module the verifier rejects; codegen would crash on it.
  std::string broken;
  llvm::raw_string_ostream brokenOs(broken);
  if (llvm::verifyModule(module, &brokenOs))
    return llvm::createStringError("%s: the module does not verify: %s", path.c_str(), broken.c_str());

  llvm::Triple triple = module.getTargetTriple();
  if (triple.getTriple().empty())
    triple.setTriple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(llvm::codegen::getMArch(), triple, error);
  if (!target)
    return llvm::createStringError("%s: no target for '%s': %s", path.c_str(), triple.str().c_str(), error.c_str());
  llvm::TargetOptions options = llvm::codegen::InitTargetOptionsFromCodeGenFlags(triple);
  std::string cpu = llvm::codegen::getCPUStr(), features = llvm::codegen::getFeaturesStr();
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpu, features, options, llvm::codegen::getExplicitRelocModel(),
                                  llvm::codegen::getExplicitCodeModel(), llvm::CodeGenOptLevel::Default));
  if (!machine)
    return llvm::createStringError("%s: cannot create a target machine for '%s'", path.c_str(), triple.str().c_str());
  // llc gives the module the target's data layout and its flags' attributes.
  module.setDataLayout(machine->createDataLayout());
  llvm::codegen::setFunctionAttributes(cpu, features, module);

  // What CodeGenTargetMachineImpl::addPassesToEmitFile builds, with the
  // visitor in place of the MIR printer before the functions are freed.
  llvm::legacy::PassManager passes;
  passes.add(new llvm::TargetLibraryInfoWrapperPass(llvm::TargetLibraryInfoImpl(triple, machine->Options.VecLib)));
  auto *machineModule = new llvm::MachineModuleInfoWrapperPass(machine.get());
  llvm::TargetPassConfig *config = machine->createPassConfig(passes);
  config->setDisableVerify(false);
  passes.add(config);
  passes.add(machineModule);
  if (config->addISelPasses())
    return llvm::createStringError("%s: the target cannot select instructions for it", path.c_str());
  config->addMachinePasses();
  config->setInitialized();
  std::optional<llvm::Error> failure;
  passes.add(new VisitMachineFunctions(visit, failure));
  passes.add(llvm::createFreeMachineFunctionPass());
  passes.run(module);
  if (failure)
    return std::move(*failure);
  std::string diagnostics = loaded.takeDiagnostics();
  if (!diagnostics.empty())
    return llvm::createStringError("%s: codegen failed: %s", path.c_str(), diagnostics.c_str());
  return llvm::Error::success();
}

} // namespace mlgo
