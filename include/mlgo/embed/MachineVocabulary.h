// MIR2Vec vocabularies: a seed-embedding file read and checked once, and its
// per-target form (entity ids as llvm-ir2vec-22 --mode=mir numbers them),
// built once per target with LLVM's MIRVocabulary and shared read-only.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Analysis/IR2Vec.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace llvm {
class MachineFunction;
class MachineOperand;
} // namespace llvm

namespace mlgo {

/// One target's MIR2Vec entities, in LLVM's layout: the target's base opcodes
/// (sorted names), the common operand kinds, then the register classes for
/// physical and again for virtual registers.
class MachineVocabulary {
public:
  size_t size() const { return Names.size(); }
  const std::string &name(uint32_t entity) const { return Names[entity]; }
  const std::vector<std::string> &names() const { return Names; }
  unsigned dimension() const { return Dimension; }
  uint32_t opcodeEntity(unsigned opcode) const { return OpcodeEntities[opcode]; }

  struct Operand {
    uint32_t Entity = 0;
    bool Embedded = false; // false: it contributes a zero vector
  };
  /// A register's class comes from `function`'s own register info. $noreg,
  /// stack slots and registers in no class (X86's $mxcsr and $fpcw) have no
  /// embedding and the first virtual-register entity, as LLVM gives $noreg.
  Operand operand(const llvm::MachineOperand &operand, const llvm::MachineFunction &function) const;
  /// The entity's seed embedding, scaled by MIR2Vec's section weights.
  const std::vector<double> &embedding(uint32_t entity) const { return Embeddings[entity]; }

private:
  friend class MachineVocabularies;
  std::vector<std::string> Names;
  std::vector<std::vector<double>> Embeddings;
  std::vector<uint32_t> OpcodeEntities; // by target opcode
  uint32_t CommonOperandBase = 0, PhysicalBase = 0, VirtualBase = 0, RegisterClasses = 0;
  unsigned Dimension = 0;
};

/// The MIR2Vec vocabularies of a run: from a vocabulary file, or the layout
/// alone (LLVM's dummy values), which is what triplets and entities need.
class MachineVocabularies {
public:
  /// Reads `path` as MIR2Vec does (-mir2vec-vocab-path): sections Opcodes,
  /// CommonOperands, PhysicalRegisters, VirtualRegisters of one width; an
  /// error names the file and what is wrong.
  static llvm::Expected<std::unique_ptr<MachineVocabularies>> load(llvm::StringRef path);
  static std::unique_ptr<MachineVocabularies> layoutOnly();
  /// The width of the file's rows; 0 for the layout alone.
  unsigned dimension() const { return Dimension; }

  /// The vocabulary of `function`'s target, built on first use.
  llvm::Expected<const MachineVocabulary *> forFunction(const llvm::MachineFunction &function);
  /// The vocabulary built for the target named `target`; null if none was.
  const MachineVocabulary *forTarget(llvm::StringRef target);

private:
  using SeedMap = std::map<std::string, llvm::ir2vec::Embedding>; // MIR2Vec's section maps
  MachineVocabularies() = default;
  std::string Path;
  bool LayoutOnly = false;
  unsigned Dimension = 0;
  SeedMap Opcodes, CommonOperands, PhysicalRegisters, VirtualRegisters;
  std::mutex Mutex;
  std::map<std::string, std::unique_ptr<MachineVocabulary>> ByTarget;
};

} // namespace mlgo
