#include "mlgo/harvest/ShardSpec.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

namespace mlgo {
namespace {

// The largest shard count (and index + 1): ShardIndex holds 32-bit values.
constexpr uint64_t MaxCount = std::numeric_limits<uint32_t>::max();

// A decimal number without sign; nullopt when it is not one or exceeds
// what 64 bits hold (the range is checked by checked()).
std::optional<uint64_t> decimal(llvm::StringRef text) {
  uint64_t n;
  if (text.empty() || !llvm::all_of(text, [](char c) { return c >= '0' && c <= '9'; }) || text.getAsInteger(10, n))
    return std::nullopt;
  return n;
}

// A variable's value as a non-negative integer; nullopt when unset.
llvm::Expected<std::optional<uint64_t>> number(const EnvironmentLookup &env, const char *name) {
  const char *value = env(name);
  if (!value)
    return std::nullopt;
  std::optional<uint64_t> n = decimal(llvm::StringRef(value).trim());
  if (!n)
    return llvm::createStringError("--shard=auto: %s=%s is not a non-negative integer", name, value);
  return *n;
}

llvm::Expected<ShardIndex> checked(uint64_t index, uint64_t count, const std::string &source) {
  if (count > MaxCount)
    return llvm::createStringError("--shard %llu/%llu%s: N is out of range (at most %llu)",
                                   static_cast<unsigned long long>(index), static_cast<unsigned long long>(count),
                                   source.c_str(), static_cast<unsigned long long>(MaxCount));
  if (count < 1 || index >= count)
    return llvm::createStringError("--shard %llu/%llu%s: need 0 <= I < N", static_cast<unsigned long long>(index),
                                   static_cast<unsigned long long>(count), source.c_str());
  return ShardIndex{static_cast<unsigned>(index), static_cast<unsigned>(count)};
}

// The shard is the task id itself: a resubmission of some tasks
// (--array=3,7) keeps each task's shard. N comes from auto/N; plain auto
// only for an array that is exactly 0..COUNT-1.
llvm::Expected<ShardIndex> fromSlurm(const EnvironmentLookup &env, std::optional<uint64_t> given) {
  auto id = number(env, "SLURM_ARRAY_TASK_ID");
  auto count = number(env, "SLURM_ARRAY_TASK_COUNT");
  auto min = number(env, "SLURM_ARRAY_TASK_MIN");
  auto max = number(env, "SLURM_ARRAY_TASK_MAX");
  for (auto *e : {&id, &count, &min, &max})
    if (!*e)
      return e->takeError();
  if (given) {
    if (*max && **max >= *given)
      return llvm::createStringError("--shard=auto/%llu, but this Slurm array has task %llu "
                                     "(SLURM_ARRAY_TASK_MAX): task ids are the shard indexes, 0 to N-1",
                                     static_cast<unsigned long long>(*given), static_cast<unsigned long long>(**max));
    return checked(**id, *given, " (from SLURM_ARRAY_TASK_ID and auto/N)");
  }
  if (!*count)
    return llvm::createStringError("--shard=auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not");
  if (min->value_or(0) != 0 || (*max && **max + 1 != **count))
    return llvm::createStringError(
        "--shard=auto: this Slurm array is not 0-%llu (SLURM_ARRAY_TASK_MIN=%s, SLURM_ARRAY_TASK_MAX=%s, "
        "SLURM_ARRAY_TASK_COUNT=%llu), so its task count is not the shard count: give --shard=auto/N (the task id "
        "is the shard index), as scripts/slurm/harvest.sbatch does",
        static_cast<unsigned long long>(**count - 1), env("SLURM_ARRAY_TASK_MIN") ? env("SLURM_ARRAY_TASK_MIN") : "",
        env("SLURM_ARRAY_TASK_MAX") ? env("SLURM_ARRAY_TASK_MAX") : "", static_cast<unsigned long long>(**count));
  return checked(**id, **count, " (from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT)");
}

llvm::Expected<ShardIndex> fromKubernetes(const EnvironmentLookup &env, uint64_t index, std::optional<uint64_t> given) {
  auto completions = number(env, "JOB_COMPLETIONS");
  if (!completions)
    return completions.takeError();
  if (given && *completions && *given != **completions)
    return llvm::createStringError("--shard=auto/%llu, but JOB_COMPLETIONS=%llu",
                                   static_cast<unsigned long long>(*given),
                                   static_cast<unsigned long long>(**completions));
  std::optional<uint64_t> count = given ? given : *completions;
  if (!count)
    return llvm::createStringError("--shard=auto: JOB_COMPLETION_INDEX=%llu is set (a Kubernetes Indexed Job) but "
                                   "not the shard count: give --shard=auto/N or set JOB_COMPLETIONS to the Job's "
                                   ".spec.completions",
                                   static_cast<unsigned long long>(index));
  return checked(index, *count, " (from JOB_COMPLETION_INDEX)");
}

} // namespace

llvm::Expected<ShardIndex> resolveShard(llvm::StringRef text, const EnvironmentLookup &lookup) {
  EnvironmentLookup env = lookup ? lookup : [](const char *name) -> const char * { return std::getenv(name); };
  auto [head, tail] = text.split('/');
  if (head != "auto") {
    std::optional<uint64_t> index = decimal(head), count = decimal(tail);
    if (!index || !count)
      return llvm::createStringError("--shard must be I/N, auto or auto/N (decimal numbers below 2^32), not '%s'",
                                     text.str().c_str());
    return checked(*index, *count, "");
  }
  std::optional<uint64_t> given;
  if (!tail.empty()) {
    given = decimal(tail);
    if (!given || *given < 1)
      return llvm::createStringError("--shard must be I/N, auto or auto/N, not '%s'", text.str().c_str());
    if (*given > MaxCount)
      return llvm::createStringError("--shard=%s: N is out of range (at most %llu)", text.str().c_str(),
                                     static_cast<unsigned long long>(MaxCount));
  }
  if (env("SLURM_ARRAY_TASK_ID"))
    return fromSlurm(env, given);
  auto k8s = number(env, "JOB_COMPLETION_INDEX");
  if (!k8s)
    return k8s.takeError();
  if (*k8s)
    return fromKubernetes(env, **k8s, given);
  std::string hint = env("SLURM_JOB_ID") ? " (this is Slurm job " + std::string(env("SLURM_JOB_ID")) +
                                               ", but not an array job: submit it with sbatch --array=0-N)"
                                         : "";
  return llvm::createStringError("--shard=auto: no scheduler shard variables are set%s: neither "
                                 "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT (Slurm array job) nor "
                                 "JOB_COMPLETION_INDEX (Kubernetes Indexed Job). Outside a scheduler give "
                                 "--shard=I/N",
                                 hint.c_str());
}

} // namespace mlgo
