#include "mlgo/embed/MachineFunctionEmbeddings.h"

#include "mlgo/embed/MachinePipeline.h"
#include "mlgo/embed/ModulePipeline.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DepthFirstIterator.h"
#include "llvm/CodeGen/MachineFunction.h"
#include "llvm/CodeGen/MachineInstr.h"
#include "llvm/IR/Module.h"

namespace mlgo {
namespace {

void add(std::vector<double> &to, const std::vector<double> &values) {
  for (size_t i = 0; i < to.size() && i < values.size(); ++i)
    to[i] += values[i];
}

} // namespace

std::vector<double> machineFunctionEmbedding(const llvm::MachineFunction &function,
                                             const MachineVocabulary &vocabulary) {
  // The additions in MIREmbedder's order, so the doubles are the same.
  const std::vector<double> zero(vocabulary.dimension(), 0.0);
  std::vector<double> out(vocabulary.dimension(), 0.0);
  for (const llvm::MachineBasicBlock *block : llvm::depth_first(&function)) {
    std::vector<double> blockVector(vocabulary.dimension(), 0.0);
    for (const llvm::MachineInstr &instruction : *block) {
      if (instruction.isDebugInstr())
        continue;
      std::vector<double> instructionVector = vocabulary.embedding(vocabulary.opcodeEntity(instruction.getOpcode()));
      for (const llvm::MachineOperand &operand : instruction.operands()) {
        MachineVocabulary::Operand entity = vocabulary.operand(operand, function);
        add(instructionVector, entity.Embedded ? vocabulary.embedding(entity.Entity) : zero);
      }
      add(blockVector, instructionVector);
    }
    add(out, blockVector);
  }
  return out;
}

llvm::Expected<ModuleEmbeddings> embedMachineModule(llvm::StringRef path, MachineVocabularies &vocabularies,
                                                    llvm::StringRef passes) {
  auto loaded = LoadedModule::loadAfter(path, passes);
  if (!loaded)
    return loaded.takeError();
  llvm::DenseMap<const llvm::Function *, std::vector<double>> byFunction;
  if (llvm::Error e = compileToRegisterAllocation(**loaded, [&](const llvm::MachineFunction &function) -> llvm::Error {
        auto vocabulary = vocabularies.forFunction(function);
        if (!vocabulary)
          return vocabulary.takeError();
        byFunction[&function.getFunction()] = machineFunctionEmbedding(function, **vocabulary);
        return llvm::Error::success();
      }))
    return std::move(e);
  ModuleEmbeddings out;
  out.Module.assign(vocabularies.dimension(), 0.0);
  for (const llvm::Function &function : (*loaded)->module()) {
    auto it = byFunction.find(&function);
    if (it == byFunction.end())
      continue;
    add(out.Module, it->second);
    out.Functions.push_back({function.getName().str(), std::move(it->second)});
  }
  return out;
}

} // namespace mlgo
