// SplitMix64's finaliser: a well-mixed 64-bit value from any 64-bit value,
// the same on every platform (seeds drawn from a seed and a name).
#pragma once

#include <cstdint>

namespace mlgo {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

} // namespace mlgo
