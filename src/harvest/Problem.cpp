#include "mlgo/harvest/Problem.h"

namespace mlgo {

const char *problemFlagName(Problem problem) {
  switch (problem) {
  case Problem::Inliner:
    return "inliner";
  case Problem::RegallocEvict:
    return "regalloc-evict";
  case Problem::RegallocPriority:
    return "regalloc-priority";
  }
  return "inliner";
}

std::optional<Problem> parseProblem(llvm::StringRef name) {
  for (Problem p : {Problem::Inliner, Problem::RegallocEvict, Problem::RegallocPriority})
    if (name == problemFlagName(p))
      return p;
  return std::nullopt;
}

bool isRegalloc(Problem problem) { return problem != Problem::Inliner; }

} // namespace mlgo
