// The random stream of `random:P[:SEED]` policies: one per module, seeded
// from the seed and the module's name, so the interactive host and the
// in-process plugin draw the same decisions whatever the worker or order.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/xxhash.h"

#include <cstdint>
#include <random>

namespace mlgo {

inline void seedModuleStream(std::mt19937_64 &rng, uint64_t seed, llvm::StringRef module) {
  rng.seed(seed ^ llvm::xxh3_64bits(module));
}

/// True with probability P (the inliner: inline).
inline bool drawBernoulli(std::mt19937_64 &rng, double probability) {
  return std::bernoulli_distribution(probability)(rng);
}

} // namespace mlgo
