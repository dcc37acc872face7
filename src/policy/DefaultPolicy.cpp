#include "mlgo/policy/Policy.h"

namespace mlgo {
namespace {
class DefaultPolicy : public Policy {
  llvm::Expected<std::string> decide(const Query &query, Deadline) override {
    if (!query.DefaultDecision)
      return llvm::createStringError("the compiler sends no default decision for this problem: default-policy "
                                     "traces need a development-mode (TFLite) LLVM");
    int64_t decision = *query.DefaultDecision;
    return std::string(reinterpret_cast<const char *>(&decision), sizeof(decision));
  }
};
} // namespace

std::unique_ptr<Policy> makeDefaultPolicy() { return std::make_unique<DefaultPolicy>(); }

std::vector<int64_t> validEvictionColumns(const Query &query) {
  std::vector<int64_t> valid;
  if (!query.MaskFeature)
    return valid;
  const TensorSpec &mask = query.Observation.header().Features[*query.MaskFeature];
  llvm::StringRef bytes = query.Observation.feature(*query.MaskFeature);
  for (size_t i = 0; i < mask.elementCount(); ++i)
    if (mask.elementAsInt(bytes, i) == 1)
      valid.push_back(static_cast<int64_t>(i));
  return valid;
}

} // namespace mlgo
