#include "mlgo/harvest/ShardSpec.h"

#include <cstdlib>
#include <string>

namespace mlgo {
namespace {

// A variable's value as a non-negative integer; nullopt when unset.
llvm::Expected<std::optional<long>> number(const EnvironmentLookup &env, const char *name) {
  const char *value = env(name);
  if (!value)
    return std::nullopt;
  long n;
  if (llvm::StringRef(value).trim().getAsInteger(10, n) || n < 0)
    return llvm::createStringError("--shard=auto: %s=%s is not a non-negative integer", name, value);
  return n;
}

llvm::Expected<ShardIndex> checked(long index, long count, const std::string &source) {
  if (count < 1 || index < 0 || index >= count)
    return llvm::createStringError("--shard %ld/%ld%s: need 0 <= I < N", index, count, source.c_str());
  return ShardIndex{static_cast<unsigned>(index), static_cast<unsigned>(count)};
}

llvm::Expected<ShardIndex> fromSlurm(const EnvironmentLookup &env, std::optional<long> given) {
  auto id = number(env, "SLURM_ARRAY_TASK_ID");
  auto count = number(env, "SLURM_ARRAY_TASK_COUNT");
  auto min = number(env, "SLURM_ARRAY_TASK_MIN");
  auto step = number(env, "SLURM_ARRAY_TASK_STEP");
  for (auto *e : {&id, &count, &min, &step})
    if (!*e)
      return e->takeError();
  if (!*count)
    return llvm::createStringError("--shard=auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not");
  long base = min->value_or(0), stride = step->value_or(1);
  if (stride < 1 || **id < base || (**id - base) % stride != 0)
    return llvm::createStringError("--shard=auto: array task %ld is not MIN + k * STEP (MIN=%ld, STEP=%ld); submit "
                                   "the array as --array=0-N or a regular range",
                                   **id, base, stride);
  if (given && *given != **count)
    return llvm::createStringError("--shard=auto/%ld, but this Slurm array has %ld tasks (SLURM_ARRAY_TASK_COUNT)",
                                   *given, **count);
  return checked((**id - base) / stride, **count, " (from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT)");
}

llvm::Expected<ShardIndex> fromKubernetes(const EnvironmentLookup &env, long index, std::optional<long> given) {
  auto completions = number(env, "JOB_COMPLETIONS");
  if (!completions)
    return completions.takeError();
  if (given && *completions && *given != **completions)
    return llvm::createStringError("--shard=auto/%ld, but JOB_COMPLETIONS=%ld", *given, **completions);
  std::optional<long> count = given ? given : *completions;
  if (!count)
    return llvm::createStringError("--shard=auto: JOB_COMPLETION_INDEX=%ld is set (a Kubernetes Indexed Job) but not "
                                   "the shard count: give --shard=auto/N or set JOB_COMPLETIONS to the Job's "
                                   ".spec.completions",
                                   index);
  return checked(index, *count, " (from JOB_COMPLETION_INDEX)");
}

} // namespace

llvm::Expected<ShardIndex> resolveShard(llvm::StringRef text, const EnvironmentLookup &lookup) {
  EnvironmentLookup env = lookup ? lookup : [](const char *name) -> const char * { return std::getenv(name); };
  auto [head, tail] = text.split('/');
  if (head != "auto") {
    long index, count;
    if (tail.empty() || head.getAsInteger(10, index) || tail.getAsInteger(10, count))
      return llvm::createStringError("--shard must be I/N, auto or auto/N, not '%s'", text.str().c_str());
    return checked(index, count, "");
  }
  std::optional<long> given;
  if (!tail.empty()) {
    long n;
    if (tail.getAsInteger(10, n) || n < 1)
      return llvm::createStringError("--shard must be I/N, auto or auto/N, not '%s'", text.str().c_str());
    given = n;
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
