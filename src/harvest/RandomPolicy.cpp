#include "mlgo/harvest/Policy.h"

#include "llvm/Support/xxhash.h"

#include <random>

namespace mlgo {
namespace {
class RandomPolicy : public Policy {
public:
  RandomPolicy(double probability, uint64_t seed) : Probability(probability), Seed(seed) {}
  llvm::Error beginModule(llvm::StringRef module) override {
    Rng.seed(Seed ^ llvm::xxh3_64bits(module));
    return llvm::Error::success();
  }
  llvm::Expected<int64_t> decide(const TrainingLogReader &, int64_t, Deadline) override {
    return std::bernoulli_distribution(Probability)(Rng) ? 1 : 0;
  }

private:
  double Probability;
  uint64_t Seed;
  std::mt19937_64 Rng;
};
} // namespace

std::unique_ptr<Policy> makeRandomPolicy(double probability, uint64_t seed) {
  return std::make_unique<RandomPolicy>(probability, seed);
}

} // namespace mlgo
