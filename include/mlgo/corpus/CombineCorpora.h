// combine-training-corpus: one manifest over the sub-corpora below a root.
#pragma once

#include "mlgo/corpus/CorpusDescription.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

struct CombinedCorpus {
  CorpusDescription Description;
  std::vector<std::string> SubCorpora; // directory names, in merge (sorted) order
};

/// Reads `<root>/<child>/corpus_description.json` for every direct child
/// directory (sorted by name; hidden ones skipped; symlinks followed) and
/// merges them: each module is prefixed with `<child>/`, and every other key
/// must be equal in all sub-corpora (compared with the first, whatever the
/// directory order). A mismatch, an unreadable manifest, a module name that
/// leaves its sub-corpus, or two modules mapping to one path is an Error
/// naming the files involved.
llvm::Expected<CombinedCorpus> combineCorpora(llvm::StringRef root);

} // namespace mlgo
