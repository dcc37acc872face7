#include "mlgo/harvest/Policy.h"

namespace mlgo {
namespace {
class DefaultPolicy : public Policy {
  llvm::Expected<int64_t> decide(const TrainingLogReader &, int64_t defaultDecision, Deadline) override {
    return defaultDecision;
  }
};
} // namespace

std::unique_ptr<Policy> makeDefaultPolicy() { return std::make_unique<DefaultPolicy>(); }

} // namespace mlgo
