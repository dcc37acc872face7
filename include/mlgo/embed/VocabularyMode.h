// Which program representation a vocabulary file embeds, told from its JSON
// sections, so a vocabulary given for the other one is an error before any
// module is compiled.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace mlgo {

/// llvm: LLVM IR (IR2Vec); mir: machine IR (MIR2Vec). llvm-ir2vec-22's --mode names.
enum class EmbeddingMode { LLVM, MIR };

llvm::StringRef embeddingModeName(EmbeddingMode mode);

/// The JSON of the vocabulary file at `path`; an error says why not ("cannot
/// read: ...", "not JSON: ..."), for the caller to name the file.
llvm::Expected<llvm::json::Value> readVocabularyJson(llvm::StringRef path);

/// The mode `path`'s vocabulary is for: MIR2Vec's when it has any of the
/// sections only MIR2Vec reads (CommonOperands, PhysicalRegisters,
/// VirtualRegisters), IR2Vec's otherwise. An error names the file when it is
/// not a JSON object.
llvm::Expected<EmbeddingMode> vocabularyMode(llvm::StringRef path);

/// An error naming `path` when its vocabulary is not for `mode`.
llvm::Error checkVocabularyMode(llvm::StringRef path, EmbeddingMode mode);

} // namespace mlgo
