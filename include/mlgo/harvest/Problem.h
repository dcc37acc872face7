// The decision problems a harvest can trace, and what each needs from the
// compiler's channel.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlgo {

enum class Problem { Inliner, RegallocEvict, RegallocPriority };

const char *problemFlagName(Problem problem); // inliner, regalloc-evict, regalloc-priority
std::optional<Problem> parseProblem(llvm::StringRef name);
bool isRegalloc(Problem problem);

/// Eviction columns: 32 physical-register candidates and "no eviction".
inline constexpr size_t EvictionColumns = 33;
inline constexpr int64_t NoEviction = 32;

} // namespace mlgo
