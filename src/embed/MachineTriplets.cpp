#include "mlgo/embed/MachinePipeline.h"
#include "mlgo/embed/MachineVocabulary.h"
#include "mlgo/embed/ModulePipeline.h"
#include "mlgo/embed/Triplets.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/CodeGen/MachineFunction.h"
#include "llvm/CodeGen/MachineInstr.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>

namespace mlgo {

llvm::Expected<ModuleTriplets> machineModuleTriplets(llvm::StringRef bitcodePath, llvm::StringRef passes,
                                                     MachineVocabularies &layout) {
  auto loaded = LoadedModule::loadAfter(bitcodePath, passes);
  if (!loaded)
    return loaded.takeError();
  struct FunctionTriplets {
    std::vector<Triplet> Triplets;
    uint32_t MaxRelation = MachineNextRelation;
  };
  llvm::DenseMap<const llvm::Function *, FunctionTriplets> byFunction;
  std::string target;
  if (llvm::Error e = compileToRegisterAllocation(**loaded, [&](const llvm::MachineFunction &function) -> llvm::Error {
        auto vocabulary = layout.forFunction(function);
        if (!vocabulary)
          return vocabulary.takeError();
        target = function.getTarget().getTarget().getName();
        FunctionTriplets &out = byFunction[&function.getFunction()];
        bool havePrevious = false;
        uint32_t previous = 0;
        for (const llvm::MachineBasicBlock &block : function)
          for (const llvm::MachineInstr &instruction : block) {
            if (instruction.isDebugInstr())
              continue;
            uint32_t opcode = (*vocabulary)->opcodeEntity(instruction.getOpcode());
            if (havePrevious)
              out.Triplets.push_back({previous, opcode, MachineNextRelation});
            uint32_t arg = 0;
            for (const llvm::MachineOperand &operand : instruction.operands())
              out.Triplets.push_back(
                  {opcode, (*vocabulary)->operand(operand, function).Entity, MachineArgRelation + arg++});
            if (arg > 0)
              out.MaxRelation = std::max(out.MaxRelation, MachineArgRelation + arg - 1);
            previous = opcode;
            havePrevious = true;
          }
        return llvm::Error::success();
      }))
    return std::move(e);
  ModuleTriplets out;
  out.MaxRelation = MachineNextRelation;
  out.Target = target;
  for (const llvm::Function &function : (*loaded)->module()) {
    auto it = byFunction.find(&function);
    if (it == byFunction.end())
      continue;
    out.Triplets.insert(out.Triplets.end(), it->second.Triplets.begin(), it->second.Triplets.end());
    out.MaxRelation = std::max(out.MaxRelation, it->second.MaxRelation);
  }
  return out;
}

} // namespace mlgo
