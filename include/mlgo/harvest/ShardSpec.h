// Which shard of a harvest this process takes: "I/N" given by hand, or
// "auto" read from a batch scheduler's environment (Slurm array jobs,
// Kubernetes Indexed Jobs). docs/cluster.md lists the variables.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>

namespace mlgo {

struct ShardIndex {
  unsigned Index = 0, Count = 1;
};

/// Looks up an environment variable (nullptr when unset); getenv by default.
using EnvironmentLookup = std::function<const char *(const char *)>;

/// Resolves `text`: "I/N" (0 <= I < N < 2^32); "auto" or "auto/N", in this order:
///  1. Slurm: the index is SLURM_ARRAY_TASK_ID itself, so resubmitting some
///     tasks (--array=3,7) gives each its own shard again. "auto/N": N given
///     (the array's task ids must stay below N); "auto": only for an array
///     that is exactly 0..COUNT-1, N = SLURM_ARRAY_TASK_COUNT.
///  2. Kubernetes Indexed Job: JOB_COMPLETION_INDEX, count from "auto/N" or
///     else JOB_COMPLETIONS.
/// Nothing set, a partial or malformed set, a value out of range (also from
/// the environment) or an index outside 0 <= I < N is an Error naming the
/// variables: never a silent 0/1, never a wrapped value.
llvm::Expected<ShardIndex> resolveShard(llvm::StringRef text, const EnvironmentLookup &env = nullptr);

} // namespace mlgo
