// The MLGO decision problems, as logs and channels name them.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace mlgo {

struct LogHeader;

enum class Problem { Inliner, RegallocEvict, RegallocPriority };

/// "inliner", "regalloc-evict", "regalloc-priority".
const char *problemName(Problem problem);
std::optional<Problem> parseProblem(llvm::StringRef name);
bool isRegalloc(Problem problem);

/// The decision's name in logs and on the channel: inlining_decision,
/// index_to_evict or priority.
const char *decisionName(Problem problem);

/// Recognises a log's problem by its decision feature, or by the channel's
/// advice spec.
std::optional<Problem> detectProblem(const LogHeader &header);

/// Eviction columns: 32 physical-register candidates and "no eviction".
inline constexpr size_t EvictionColumns = 33;
inline constexpr int64_t NoEviction = 32;

} // namespace mlgo
