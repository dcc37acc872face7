#include "mlgo/extract/ModuleOutcome.h"

namespace mlgo {

const char *statusName(ModuleStatus status) {
  switch (status) {
  case ModuleStatus::Ok:
    return "ok";
  case ModuleStatus::Failed:
    return "failed";
  case ModuleStatus::Filtered:
    return "filtered";
  case ModuleStatus::Duplicate:
    return "duplicate";
  case ModuleStatus::Skipped:
    return "skipped";
  }
  return "failed";
}

std::optional<ModuleStatus> parseStatus(llvm::StringRef name) {
  for (ModuleStatus s :
       {ModuleStatus::Ok, ModuleStatus::Failed, ModuleStatus::Filtered, ModuleStatus::Duplicate, ModuleStatus::Skipped})
    if (name == statusName(s))
      return s;
  return std::nullopt;
}

} // namespace mlgo
