// validate-corpus: checks a corpus before anyone spends compute on it.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mlgo {

struct ModuleFacts {
  std::string Name;
  uint64_t BitcodeSize = 0;
  std::string Producer; // e.g. "LLVM22.1.8"; empty when the .bc is unusable
  std::string Triple;
  uint64_t Hash = 0; // of the .bc bytes
};

struct CorpusProblem {
  std::string Code;   // a stable code, see corpus_formats/validate_corpus.schema.json
  std::string Module; // "" for corpus-wide problems
  std::string Detail;
};

struct CorpusValidation {
  std::string Directory;
  bool HasThinLTO = false;
  bool HasOverride = false;
  std::vector<ModuleFacts> Modules;
  std::vector<CorpusProblem> Problems;
  /// Modules whose .bc bytes are identical (groups of two or more).
  std::vector<std::vector<std::string>> Duplicates;

  bool sound() const { return Problems.empty(); }
  nlohmann::ordered_json toJson() const;
  std::string toText(bool listModules) const;
};

/// Runs every check on the corpus at `dir` with `workers` threads (0: one
/// per hardware thread). Command lines are screened as harvest-logs screens
/// them when it runs `clangPath` (a driver line through that clang's driver).
CorpusValidation validateCorpus(llvm::StringRef dir, unsigned workers = 0, const std::string &clangPath = "clang-22");

} // namespace mlgo
