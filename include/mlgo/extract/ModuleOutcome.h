// What became of one candidate: the unit of the journal and the report.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

enum class ModuleStatus { Ok, Failed, Filtered, Duplicate, Skipped };

const char *statusName(ModuleStatus status);
std::optional<ModuleStatus> parseStatus(llvm::StringRef name);

struct ModuleOutcome {
  std::string Input;  // the object file path as opened
  std::string Member; // the archive member, when Input is a static archive
  std::string Origin; // where the input named it
  std::string Name;   // the module name ("" when none was derived)
  ModuleStatus Status = ModuleStatus::Failed;
  std::string Reason; // a stable code ("" for ok)
  std::string Detail; // the human-readable explanation
  /// Codes for modules kept that consumers may not load (cmd_not_cc1, ...).
  std::vector<std::string> Warnings;
  uint64_t InputSize = 0;
  int64_t InputMtimeNs = 0;
  bool Resumed = false;
  /// Failed to be rewritten, but its previous files stay in the corpus.
  bool KeptPrevious = false;
};

} // namespace mlgo
