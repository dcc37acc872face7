// `mlgo-ir2vec embed`: the IR2Vec embedding of every function (and module)
// of a corpus, computed in parallel and streamed, in corpus order, to a
// JSON Lines table and optionally a TFRecord of tf.train.Examples.
#pragma once

#include "mlgo/embed/FunctionEmbeddings.h"
#include "mlgo/embed/VocabularyMode.h"

#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace mlgo {

struct EmbedCorpusOptions {
  std::string CorpusDir, VocabPath;
  std::string OutputPath;   // JSON Lines (embedding_table.schema.json)
  std::string TFRecordPath; // "" = none
  std::string Passes;       // an opt pipeline run first; "" = none
  EmbeddingKind Kind = EmbeddingKind::Symbolic; // IR2Vec's; MIR2Vec has symbolic only
  EmbeddingMode Mode = EmbeddingMode::LLVM;     // mir: machine functions at -stop-before=greedy
  unsigned Workers = 0; // 0 = one per hardware thread
};

struct EmbedCorpusSummary {
  size_t Modules = 0, Functions = 0;
  unsigned Dimension = 0;
  /// Modules left out of the table, with the reason (also on stderr).
  std::vector<std::pair<std::string, std::string>> Failed;
};

/// Embeds every module of the corpus. A module that cannot be read or
/// embedded is left out and listed in Failed; the run fails only when the
/// corpus, the vocabulary or an output cannot be used. Outputs appear
/// whole (temporary file, then rename) or not at all.
llvm::Expected<EmbedCorpusSummary> embedCorpus(const EmbedCorpusOptions &options);

/// One tf.train.Example: module and function as bytes (no function feature
/// for a module's own record), embedding as a float list.
std::string embeddingExample(llvm::StringRef module, const std::string *function, const std::vector<double> &values);

} // namespace mlgo
