#include "mlgo/embed/MachineVocabulary.h"
#include "mlgo/embed/VocabularyMode.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/CodeGen/MIR2Vec.h"
#include "llvm/CodeGen/MachineFunction.h"
#include "llvm/CodeGen/MachineOperand.h"
#include "llvm/CodeGen/MachineRegisterInfo.h"
#include "llvm/CodeGen/TargetInstrInfo.h"
#include "llvm/CodeGen/TargetRegisterInfo.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"

namespace mlgo {

using llvm::mir2vec::MIRVocabulary;

llvm::Expected<std::unique_ptr<MachineVocabularies>> MachineVocabularies::load(llvm::StringRef path) {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError("%s: not a MIR2Vec vocabulary: %s", path.str().c_str(), why.c_str());
  };
  llvm::Expected<llvm::json::Value> json = readVocabularyJson(path);
  if (!json)
    return fail(llvm::toString(json.takeError()));
  std::unique_ptr<MachineVocabularies> out(new MachineVocabularies());
  out->Path = path.str();
  // The sections and checks of MIR2VecVocabProvider, with LLVM's own parser.
  std::pair<const char *, SeedMap *> sections[] = {{"Opcodes", &out->Opcodes},
                                                   {"CommonOperands", &out->CommonOperands},
                                                   {"PhysicalRegisters", &out->PhysicalRegisters},
                                                   {"VirtualRegisters", &out->VirtualRegisters}};
  unsigned first = 0;
  for (auto &[key, map] : sections) {
    unsigned dimension = 0;
    if (llvm::Error e = llvm::ir2vec::VocabStorage::parseVocabSection(key, *json, *map, dimension))
      return fail(llvm::toString(std::move(e)));
    if (first && dimension != first)
      return fail("section '" + std::string(key) + "' has rows of " + std::to_string(dimension) +
                  " values, 'Opcodes' of " + std::to_string(first));
    first = dimension;
  }
  out->Dimension = first;
  return out;
}

std::unique_ptr<MachineVocabularies> MachineVocabularies::layoutOnly() {
  std::unique_ptr<MachineVocabularies> out(new MachineVocabularies());
  out->LayoutOnly = true;
  return out;
}

const MachineVocabulary *MachineVocabularies::forTarget(llvm::StringRef target) {
  std::lock_guard<std::mutex> lock(Mutex);
  auto it = ByTarget.find(target.str());
  return it == ByTarget.end() ? nullptr : it->second.get();
}

llvm::Expected<const MachineVocabulary *> MachineVocabularies::forFunction(const llvm::MachineFunction &function) {
  std::string target = function.getTarget().getTarget().getName();
  std::lock_guard<std::mutex> lock(Mutex);
  if (auto it = ByTarget.find(target); it != ByTarget.end())
    return it->second.get();
  const llvm::TargetInstrInfo *instrs = function.getSubtarget().getInstrInfo();
  const llvm::TargetRegisterInfo *registers = function.getSubtarget().getRegisterInfo();
  if (!instrs || !registers || registers->getNumRegClasses() == 0)
    return llvm::createStringError("target %s has no instruction or register info for MIR2Vec", target.c_str());
  // LLVM's MIRVocabulary builds the layout and the weighted seeds. It keeps
  // this function's register info, so it is not kept: its tables are.
  auto vocabulary = LayoutOnly
                        ? MIRVocabulary::createDummyVocabForTest(*instrs, *registers, function.getRegInfo(), 1)
                        : MIRVocabulary::create(SeedMap(Opcodes), SeedMap(CommonOperands), SeedMap(PhysicalRegisters),
                                                SeedMap(VirtualRegisters), *instrs, *registers, function.getRegInfo());
  if (!vocabulary)
    return llvm::createStringError("%s: MIR2Vec cannot use this vocabulary for target %s: %s",
                                   LayoutOnly ? "MIR2Vec layout" : Path.c_str(), target.c_str(),
                                   llvm::toString(vocabulary.takeError()).c_str());
  auto out = std::make_unique<MachineVocabulary>();
  out->Dimension = vocabulary->getDimension();
  for (auto it = vocabulary->begin(); it != vocabulary->end(); ++it)
    out->Embeddings.push_back((*it).getData());
  size_t size = vocabulary->getCanonicalSize();
  for (unsigned entity = 0; entity < size; ++entity)
    out->Names.push_back(vocabulary->getStringKey(entity));
  llvm::StringRef firstClass = registers->getRegClassName(registers->getRegClass(0));
  out->CommonOperandBase = vocabulary->getCanonicalIndexForOperandName("Immediate"); // MO_Immediate comes first
  out->PhysicalBase = vocabulary->getCanonicalIndexForRegisterClass(firstClass, /*IsPhysical=*/true);
  out->VirtualBase = vocabulary->getCanonicalIndexForRegisterClass(firstClass, /*IsPhysical=*/false);
  out->RegisterClasses = registers->getNumRegClasses();
  if (out->Embeddings.size() != size || out->VirtualBase + out->RegisterClasses != size ||
      out->PhysicalBase + out->RegisterClasses != out->VirtualBase || out->CommonOperandBase >= out->PhysicalBase)
    return llvm::createStringError("target %s: MIR2Vec's layout is not the one this tool knows", target.c_str());
  // An opcode's entity is its base name's place among the sorted base names.
  llvm::StringMap<uint32_t> opcodeIds;
  for (uint32_t entity = 0; entity < out->CommonOperandBase; ++entity)
    opcodeIds[out->Names[entity]] = entity;
  for (unsigned opcode = 0; opcode < instrs->getNumOpcodes(); ++opcode) {
    auto it = opcodeIds.find(MIRVocabulary::extractBaseOpcodeName(instrs->getName(opcode)));
    if (it == opcodeIds.end())
      return llvm::createStringError("target %s: opcode %s has no MIR2Vec entity", target.c_str(),
                                     instrs->getName(opcode).str().c_str());
    out->OpcodeEntities.push_back(it->second);
  }
  return (ByTarget[target] = std::move(out)).get();
}

MachineVocabulary::Operand MachineVocabulary::operand(const llvm::MachineOperand &operand,
                                                      const llvm::MachineFunction &function) const {
  if (!operand.isReg()) {
    // Common operands by kind, MO_Immediate first, as LLVM numbers them (a
    // kind past its 20 names would be numbered into the registers: no seed).
    uint32_t entity = CommonOperandBase + static_cast<uint32_t>(operand.getType()) - 1;
    return {entity, entity < PhysicalBase};
  }
  llvm::Register reg = operand.getReg();
  if (!reg.isValid() || reg.isStack())
    return {VirtualBase, false};
  // Each function's own register info: llvm-ir2vec-22 reads every function's
  // virtual registers in the first function's, and LLVM 22.1's MIR2Vec stops
  // at a register of no class (LLVM main treats it as $noreg; so do we).
  const llvm::TargetRegisterClass *regClass =
      reg.isPhysical() ? function.getSubtarget().getRegisterInfo()->getMinimalPhysRegClass(reg.asMCReg())
                       : function.getRegInfo().getRegClassOrNull(reg);
  if (!regClass || regClass->getID() >= RegisterClasses)
    return {VirtualBase, false};
  return {(reg.isPhysical() ? PhysicalBase : VirtualBase) + regClass->getID(), true};
}

} // namespace mlgo
