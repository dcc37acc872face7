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

/// Resolves `text`: "I/N" (0 <= I < N); "auto" or "auto/N", in this order:
///  1. Slurm: SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, index
///     (ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP;
///  2. Kubernetes Indexed Job: JOB_COMPLETION_INDEX, count from "auto/N" or
///     else JOB_COMPLETIONS.
/// "auto/N" must agree with the scheduler's count. Nothing set, a partial or
/// malformed set, or an index out of range is an Error naming the variables:
/// never a silent 0/1.
llvm::Expected<ShardIndex> resolveShard(llvm::StringRef text, const EnvironmentLookup &env = nullptr);

} // namespace mlgo
