// IR2Vec embeddings of a module's functions, computed in-process with
// libLLVM's IR2Vec classes (no llvm-ir2vec or opt is spawned): what
// `mlgo-ir2vec embed` writes for every module of a corpus.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlgo {

enum class EmbeddingKind { Symbolic, FlowAware };

/// An IR2Vec vocabulary, loaded once and shared read-only by every thread.
class EmbeddingVocabulary {
public:
  /// Reads `path` as LLVM's IR2Vec analysis does (-ir2vec-vocab-path, with
  /// the -ir2vec-{opc,type,arg}-weight scaling); an error names the file.
  static llvm::Expected<std::unique_ptr<EmbeddingVocabulary>> load(llvm::StringRef path);
  ~EmbeddingVocabulary();
  unsigned dimension() const;

  struct State;
  const State &state() const { return *Impl; }

private:
  explicit EmbeddingVocabulary(std::unique_ptr<State> impl);
  std::unique_ptr<State> Impl;
};

struct FunctionEmbedding {
  std::string Function;
  std::vector<double> Values;
};

struct ModuleEmbeddings {
  /// Every function with a body, in module order.
  std::vector<FunctionEmbedding> Functions;
  /// The module's vector: the sum of its functions' (zeros without any).
  std::vector<double> Module;
};

/// Parses the bitcode at `path` in a context of its own, runs the opt
/// pipeline `passes` first when it is not empty (with the module's target,
/// as opt-22 -passes=... would), and embeds every function.
llvm::Expected<ModuleEmbeddings> embedModule(llvm::StringRef path, const EmbeddingVocabulary &vocabulary,
                                             EmbeddingKind kind, llvm::StringRef passes);

} // namespace mlgo
