// The in-process versions of harvest-logs' default and random policies.
#include "mlgo/policy/InProcessPolicy.h"
#include "mlgo/policy/Policy.h"
#include "mlgo/policy/RandomStream.h"

namespace mlgo {
namespace {

// NoInference: the default heuristic decides.
class DefaultDecisions : public InProcessPolicy {
  llvm::Expected<bool> decide(const InProcessQuery &query, llvm::MutableArrayRef<std::string>) override {
    return query.DefaultDecision;
  }
};

// The interactive random policy's stream (RandomStream.h), so a seeded run
// decides identically in both modes.
class RandomDecisions : public InProcessPolicy {
public:
  RandomDecisions(double probability, uint64_t seed) : Probability(probability), Seed(seed) {}
  llvm::Error beginModule(llvm::StringRef module, llvm::ArrayRef<TensorSpec>) override {
    seedModuleStream(Rng, Seed, module);
    return llvm::Error::success();
  }
  llvm::Expected<bool> decide(const InProcessQuery &, llvm::MutableArrayRef<std::string>) override {
    return drawBernoulli(Rng, Probability);
  }
  bool usesDefaultDecision() const override { return false; }

private:
  double Probability;
  uint64_t Seed;
  std::mt19937_64 Rng;
};

InProcessPolicyRegistration Default("default", "default: the default heuristic's decisions (NoInference)",
                                    [](llvm::StringRef argument) -> llvm::Expected<std::unique_ptr<InProcessPolicy>> {
                                      if (!argument.empty())
                                        return llvm::createStringError("the default policy takes no argument");
                                      return std::make_unique<DefaultDecisions>();
                                    });

InProcessPolicyRegistration Random("random",
                                   "random:P[:SEED]: inline with probability P (as harvest-logs' random policy)",
                                   [](llvm::StringRef argument) -> llvm::Expected<std::unique_ptr<InProcessPolicy>> {
                                     auto spec = parsePolicy(("random:" + argument).str());
                                     if (!spec)
                                       return spec.takeError();
                                     return std::make_unique<RandomDecisions>(spec->Probability, spec->Seed);
                                   });

} // namespace
} // namespace mlgo
