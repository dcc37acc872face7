// corpus_description.json: the manifest at the root of every MLGO corpus.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mlgo {

inline constexpr const char *CorpusDescriptionFile = "corpus_description.json";

struct CorpusDescription {
  /// Every key except "modules", in file order (has_thinlto,
  /// global_command_override, ...). "modules" is always written last.
  nlohmann::ordered_json Fields = nlohmann::ordered_json::object();
  std::vector<std::string> Modules;

  /// The exact bytes the reference tools write (json.dump, indent=2).
  std::string serialize() const;

  bool hasThinLTO() const;
};

/// Writes `<dir>/corpus_description.json` atomically.
llvm::Error writeCorpusDescription(llvm::StringRef dir, const CorpusDescription &description);

/// Reads and checks the shape of `<dir>/corpus_description.json`: an object
/// whose "modules" is a list of strings. Errors name the file.
llvm::Expected<CorpusDescription> readCorpusDescription(llvm::StringRef dir);

/// readCorpusDescription, and every module name checked with
/// checkModuleName (ModuleNaming.h): what a tool that opens the modules'
/// files reads. An error names the file and the module.
llvm::Expected<CorpusDescription> readCheckedCorpusDescription(llvm::StringRef dir);

} // namespace mlgo
