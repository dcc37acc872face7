// --shard: by hand, from Slurm array variables, from Kubernetes Indexed Jobs,
// and the errors when the environment says nothing (never a silent 0/1).
#include "mlgo/harvest/ShardSpec.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace mlgo;

namespace {

struct Env {
  std::map<std::string, std::string> Vars;
  EnvironmentLookup lookup() const {
    return [this](const char *name) -> const char * {
      auto it = Vars.find(name);
      return it == Vars.end() ? nullptr : it->second.c_str();
    };
  }
};

ShardIndex ok(const std::string &text, const Env &env = {}) {
  auto shard = resolveShard(text, env.lookup());
  EXPECT_TRUE(static_cast<bool>(shard)) << text << ": " << (shard ? "" : llvm::toString(shard.takeError()));
  return shard ? *shard : ShardIndex{999, 999};
}

std::string error(const std::string &text, const Env &env = {}) {
  auto shard = resolveShard(text, env.lookup());
  if (shard) {
    ADD_FAILURE() << text << " resolved to " << shard->Index << "/" << shard->Count;
    return "";
  }
  return llvm::toString(shard.takeError());
}

TEST(ShardSpec, ByHand) {
  EXPECT_EQ(ok("3/8").Index, 3u);
  EXPECT_EQ(ok("3/8").Count, 8u);
  EXPECT_NE(error("8/8").find("need 0 <= I < N"), std::string::npos);
  EXPECT_NE(error("1/0").find("need 0 <= I < N"), std::string::npos);
  EXPECT_NE(error("1").find("I/N, auto or auto/N"), std::string::npos);
  EXPECT_NE(error("a/b").find("I/N, auto or auto/N"), std::string::npos);
  EXPECT_NE(error("auto/0").find("I/N, auto or auto/N"), std::string::npos);
}

TEST(ShardSpec, SlurmArray) {
  Env env{{{"SLURM_ARRAY_TASK_ID", "2"},
           {"SLURM_ARRAY_TASK_COUNT", "4"},
           {"SLURM_ARRAY_TASK_MIN", "0"},
           {"SLURM_ARRAY_TASK_MAX", "3"}}};
  EXPECT_EQ(ok("auto", env).Index, 2u);
  EXPECT_EQ(ok("auto", env).Count, 4u);
  EXPECT_EQ(ok("auto/4", env).Index, 2u);
  // auto/N: a larger N than the array is a resubmission of some tasks.
  EXPECT_EQ(ok("auto/8", env).Count, 8u);
  EXPECT_NE(error("auto/3", env).find("this Slurm array has task 3 (SLURM_ARRAY_TASK_MAX)"), std::string::npos);
  // Slurm wins over Kubernetes when both are set.
  env.Vars["JOB_COMPLETION_INDEX"] = "0";
  EXPECT_EQ(ok("auto", env).Index, 2u);
}

// Rerunning tasks 3 and 7 of an 8-task harvest (sbatch --array=3,7): Slurm
// says COUNT=2, MIN=3, MAX=7, STEP=1. Each task keeps its own shard with
// auto/8; plain auto cannot know N and says so (it once ran task 3 as 0/2).
TEST(ShardSpec, SlurmResubmittedTasksKeepTheirShard) {
  for (const char *id : {"3", "7"}) {
    Env rerun{{{"SLURM_ARRAY_TASK_ID", id},
               {"SLURM_ARRAY_TASK_COUNT", "2"},
               {"SLURM_ARRAY_TASK_MIN", "3"},
               {"SLURM_ARRAY_TASK_MAX", "7"},
               {"SLURM_ARRAY_TASK_STEP", "1"}}};
    ShardIndex shard = ok("auto/8", rerun);
    EXPECT_EQ(shard.Index, static_cast<unsigned>(std::stoi(id)));
    EXPECT_EQ(shard.Count, 8u);
    std::string plain = error("auto", rerun);
    EXPECT_NE(plain.find("give --shard=auto/N"), std::string::npos) << plain;
  }
  // --array=1-4 is not 0..N-1 either.
  EXPECT_NE(error("auto", Env{{{"SLURM_ARRAY_TASK_ID", "4"},
                               {"SLURM_ARRAY_TASK_COUNT", "4"},
                               {"SLURM_ARRAY_TASK_MIN", "1"},
                               {"SLURM_ARRAY_TASK_MAX", "4"}}})
                .find("is not 0-3"),
            std::string::npos);
}

TEST(ShardSpec, SlurmErrors) {
  EXPECT_NE(error("auto", Env{{{"SLURM_ARRAY_TASK_ID", "1"}}}).find("SLURM_ARRAY_TASK_COUNT is not"),
            std::string::npos);
  EXPECT_NE(error("auto", Env{{{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}})
                .find("SLURM_ARRAY_TASK_ID=x is not a non-negative integer"),
            std::string::npos);
  EXPECT_NE(error("auto/4", Env{{{"SLURM_ARRAY_TASK_ID", "-1"}}}).find("SLURM_ARRAY_TASK_ID=-1 is not a non-negative"),
            std::string::npos);
  // A task beyond the count.
  EXPECT_NE(error("auto", Env{{{"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}}).find("need 0 <= I < N"),
            std::string::npos);
  EXPECT_NE(error("auto/4", Env{{{"SLURM_ARRAY_TASK_ID", "4"}}}).find("need 0 <= I < N"), std::string::npos);
  // A Slurm job that is not an array job.
  std::string plain = error("auto", Env{{{"SLURM_JOB_ID", "42"}}});
  EXPECT_NE(plain.find("Slurm job 42, but not an array job"), std::string::npos) << plain;
}

// Counts and indexes of 2^32 and more once wrapped to 32 bits: 0/2^32 became
// 0/0 (an endless loop allocating), 2^32/(2^32+1) became 0/1 (the whole
// corpus). They are refused, by hand and from the environment.
TEST(ShardSpec, ValuesBeyond32BitsAreRefused) {
  EXPECT_EQ(ok("4294967294/4294967295").Index, 4294967294u);
  for (const char *text : {"0/4294967296", "4294967296/4294967297", "1/18446744073709551617", "auto/4294967296"}) {
    std::string message = error(text);
    EXPECT_TRUE(message.find("out of range") != std::string::npos || message.find("below 2^32") != std::string::npos)
        << text << ": " << message;
  }
  EXPECT_NE(error("+1/2").find("I/N, auto or auto/N"), std::string::npos);
  EXPECT_NE(error("1/ 2").find("I/N, auto or auto/N"), std::string::npos);
  EXPECT_NE(error("auto", Env{{{"SLURM_ARRAY_TASK_ID", "4294967296"}, {"SLURM_ARRAY_TASK_COUNT", "4294967297"}}})
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(error("auto/2", Env{{{"SLURM_ARRAY_TASK_ID", "4294967296"}}}).find("need 0 <= I < N"), std::string::npos);
  EXPECT_NE(error("auto", Env{{{"JOB_COMPLETION_INDEX", "4294967296"}, {"JOB_COMPLETIONS", "4294967297"}}})
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(error("auto", Env{{{"JOB_COMPLETION_INDEX", "99999999999999999999999"}, {"JOB_COMPLETIONS", "2"}}})
                .find("is not a non-negative integer"),
            std::string::npos);
}

TEST(ShardSpec, KubernetesIndexedJob) {
  Env env{{{"JOB_COMPLETION_INDEX", "5"}}};
  EXPECT_EQ(ok("auto/8", env).Index, 5u);
  EXPECT_EQ(ok("auto/8", env).Count, 8u);
  std::string noCount = error("auto", env);
  EXPECT_NE(noCount.find("JOB_COMPLETION_INDEX=5"), std::string::npos) << noCount;
  EXPECT_NE(noCount.find("JOB_COMPLETIONS"), std::string::npos) << noCount;
  env.Vars["JOB_COMPLETIONS"] = "6";
  EXPECT_EQ(ok("auto", env).Count, 6u);
  EXPECT_NE(error("auto/8", env).find("JOB_COMPLETIONS=6"), std::string::npos);
  env.Vars["JOB_COMPLETIONS"] = "4";
  EXPECT_NE(error("auto", env).find("need 0 <= I < N"), std::string::npos);
}

TEST(ShardSpec, AutoWithoutASchedulerIsAnError) {
  for (const char *text : {"auto", "auto/4"}) {
    std::string message = error(text);
    EXPECT_NE(message.find("no scheduler shard variables are set"), std::string::npos) << message;
    EXPECT_NE(message.find("--shard=I/N"), std::string::npos) << message;
  }
}

} // namespace
