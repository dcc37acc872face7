#include "mlgo/policy/Policy.h"
#include "mlgo/policy/RandomStream.h"

#include <random>

namespace mlgo {
namespace {
template <typename T> std::string bytesOf(T value) {
  return std::string(reinterpret_cast<const char *>(&value), sizeof(value));
}

class RandomPolicy : public Policy {
public:
  RandomPolicy(double probability, uint64_t seed) : Probability(probability), Seed(seed) {}
  llvm::Error beginModule(llvm::StringRef module) override {
    seedModuleStream(Rng, Seed, module);
    return llvm::Error::success();
  }
  llvm::Expected<std::string> decide(const Query &query, Deadline) override {
    if (query.Advice.Type == ElementType::Float) // priority: integral, below 2^32
      return bytesOf(static_cast<float>(std::uniform_int_distribution<uint32_t>(0, (1u << 20) - 1)(Rng)));
    bool act = drawBernoulli(Rng, Probability);
    if (!query.MaskFeature) // the inliner
      return bytesOf<int64_t>(act ? 1 : 0);
    // Eviction: only columns the mask allows; 32 is "no eviction".
    std::vector<int64_t> evictions;
    bool mayKeep = false;
    for (int64_t column : validEvictionColumns(query)) {
      if (column == NoEviction)
        mayKeep = true;
      else
        evictions.push_back(column);
    }
    if (!evictions.empty() && (act || !mayKeep))
      return bytesOf<int64_t>(evictions[std::uniform_int_distribution<size_t>(0, evictions.size() - 1)(Rng)]);
    return bytesOf<int64_t>(NoEviction);
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
