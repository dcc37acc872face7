// How sure a policy was at each decision of a trajectory, for
// harvest-logs --explore_order=uncertain: the exploration flips the step
// the base policy was least sure of (ml-compiler-opt's explorer takes the
// smallest gap between its two action probabilities).
#pragma once

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

enum class CertaintySource {
  /// The default heuristic: |threshold - inline cost| from the sites file's
  /// cost_margin (plugin mode); a cost that is not variable (always or never
  /// inline) is certain (+infinity).
  CostMargin,
  /// A model that logs `inlining_logits` ([no, yes], e.g. our exported
  /// policies): |yes - no|, which orders steps as the gap between the two
  /// softmax probabilities does.
  Logits,
  /// An exec: policy that sends its certainty after each decision
  /// (MLGO_POLICY_CERTAINTY=1), logged as `policy_certainty` (float64 [1]):
  /// its absolute value.
  PolicyCertainty,
};

/// One certainty per logged decision of `module` in the harvest `dir`
/// (larger: surer); an error names the file when it cannot say, or when it
/// describes another number of decisions than `decisions`.
llvm::Expected<std::vector<double>> stepCertainty(CertaintySource source, const std::string &dir,
                                                  const std::string &module, size_t decisions);

} // namespace mlgo
