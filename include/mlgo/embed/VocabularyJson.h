// The vocabulary JSON `mlgo-ir2vec train` writes: each trained entity put in
// the section and under the key that IR2Vec (LLVM IR) or MIR2Vec (machine IR)
// reads it from, the mode told from the entity names of the triplets.
#pragma once

#include "mlgo/embed/TransE.h"
#include "mlgo/embed/VocabularyMode.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

struct VocabularyLayout {
  EmbeddingMode Mode = EmbeddingMode::LLVM;
  std::vector<std::string> Sections; // in the order written
  struct Entry {
    unsigned Section = 0;
    std::string Key;
  };
  std::vector<Entry> Entries; // by entity id
};

/// The layout of `data`'s entities, read from `dir` (named in errors).
/// MIR2Vec's when entity2id.txt names register classes (PhyReg_<class>,
/// VirtReg_<class>, as llvm-ir2vec-22 entities --mode=mir lists them):
/// opcodes, then the common operands from Immediate on, then the classes,
/// keyed without their prefix in PhysicalRegisters and VirtualRegisters.
/// IR2Vec's otherwise: Opcodes, Types, Arguments, Predicates (left out when
/// no entity is a predicate, which IR2Vec allows). An error when the
/// entities are not in that order, a section the reader requires would be
/// empty (IR2Vec and MIR2Vec reject the file), an entity name is not UTF-8
/// (it cannot be a JSON key), or relation2id.txt is the other mode's.
llvm::Expected<VocabularyLayout> vocabularyLayout(const TripletData &data, llvm::StringRef dir);

/// The trained entity vectors as that JSON, one object per section.
std::string vocabularyJson(const VocabularyLayout &layout, const TransEModel &model);

} // namespace mlgo
