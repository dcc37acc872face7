#include "mlgo/log/Problem.h"

#include "mlgo/log/TrainingLog.h"

namespace mlgo {
namespace {
constexpr Problem All[] = {Problem::Inliner, Problem::RegallocEvict, Problem::RegallocPriority};
}

const char *problemName(Problem problem) {
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

const char *decisionName(Problem problem) {
  switch (problem) {
  case Problem::Inliner:
    return "inlining_decision";
  case Problem::RegallocEvict:
    return "index_to_evict";
  case Problem::RegallocPriority:
    return "priority";
  }
  return "inlining_decision";
}

std::optional<Problem> parseProblem(llvm::StringRef name) {
  for (Problem p : All)
    if (name == problemName(p))
      return p;
  return std::nullopt;
}

bool isRegalloc(Problem problem) { return problem != Problem::Inliner; }

std::optional<Problem> detectProblem(const LogHeader &header) {
  for (Problem p : All)
    if (header.find(decisionName(p)) || (header.Advice && header.Advice->Name == decisionName(p)))
      return p;
  return std::nullopt;
}

} // namespace mlgo
