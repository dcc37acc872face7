// MIR2Vec embeddings of a module's machine functions at the input of
// register allocation (the MIR llc-22 -stop-before=greedy prints), computed
// in-process: what `mlgo-ir2vec embed --mode=mir` writes for every module.
#pragma once

#include "mlgo/embed/FunctionEmbeddings.h"
#include "mlgo/embed/MachineVocabulary.h"

namespace llvm {
class MachineFunction;
} // namespace llvm

namespace mlgo {

/// Symbolic MIR2Vec, summed as LLVM's MIREmbedder sums it: over the blocks
/// reachable from the entry (depth first), per instruction (debug
/// instructions skipped) its opcode's seed plus each operand's.
std::vector<double> machineFunctionEmbedding(const llvm::MachineFunction &function,
                                             const MachineVocabulary &vocabulary);

/// Parses the bitcode at `path`, runs the opt pipeline `passes` first when it
/// is not empty, compiles it to the input of greedy register allocation and
/// embeds every machine function (in module order; the module's vector is
/// their sum).
llvm::Expected<ModuleEmbeddings> embedMachineModule(llvm::StringRef path, MachineVocabularies &vocabularies,
                                                    llvm::StringRef passes);

} // namespace mlgo
