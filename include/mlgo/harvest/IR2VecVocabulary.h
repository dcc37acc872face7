// An IR2Vec vocabulary (--ir2vec_vocab): the JSON seed embeddings LLVM's
// IR2Vec analysis reads (-ir2vec-vocab-path), checked before a harvest
// hands it to every compile, and hashed for the journal's options header.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace mlgo {

/// The largest vocabulary file read (LLVM's seed vocabularies are under 1 MB).
constexpr uint64_t MaxIR2VecVocabularyBytes = uint64_t(64) << 20;

struct IR2VecVocabularyInfo {
  std::string Path;   // absolute: the compiles run in their work directories
  std::string Sha256; // of the file's bytes, lower-case hex
  size_t Dimension = 0;
  size_t Entries = 0;
};

/// Reads `path` and checks its shape as IR2Vec needs it: a JSON object with
/// the sections "Opcodes", "Types" and "Arguments" (other sections are kept
/// for LLVM to judge), each an object mapping entity names to lists of
/// numbers, every list of one dimension (at least 1). Errors name the file,
/// the section and the entity.
llvm::Expected<IR2VecVocabularyInfo> checkIR2VecVocabulary(llvm::StringRef path);

} // namespace mlgo
