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
  Env env{{{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "0"}}};
  EXPECT_EQ(ok("auto", env).Index, 2u);
  EXPECT_EQ(ok("auto", env).Count, 4u);
  EXPECT_EQ(ok("auto/4", env).Index, 2u);
  EXPECT_NE(error("auto/5", env).find("this Slurm array has 4 tasks"), std::string::npos);
  // --array=1-4 and --array=10-16:2.
  EXPECT_EQ(
      ok("auto", Env{{{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "1"}}})
          .Index,
      3u);
  Env stepped{{{"SLURM_ARRAY_TASK_ID", "14"},
               {"SLURM_ARRAY_TASK_COUNT", "4"},
               {"SLURM_ARRAY_TASK_MIN", "10"},
               {"SLURM_ARRAY_TASK_STEP", "2"}}};
  EXPECT_EQ(ok("auto", stepped).Index, 2u);
  stepped.Vars["SLURM_ARRAY_TASK_ID"] = "13";
  EXPECT_NE(error("auto", stepped).find("is not MIN + k * STEP"), std::string::npos);
  // Slurm wins over Kubernetes when both are set.
  env.Vars["JOB_COMPLETION_INDEX"] = "0";
  EXPECT_EQ(ok("auto", env).Index, 2u);
}

TEST(ShardSpec, SlurmErrors) {
  EXPECT_NE(error("auto", Env{{{"SLURM_ARRAY_TASK_ID", "1"}}}).find("SLURM_ARRAY_TASK_COUNT is not"),
            std::string::npos);
  EXPECT_NE(error("auto", Env{{{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}})
                .find("SLURM_ARRAY_TASK_ID=x is not a non-negative integer"),
            std::string::npos);
  // A task beyond the count (a list like --array=0,7 has COUNT 2).
  EXPECT_NE(error("auto", Env{{{"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}}).find("need 0 <= I < N"),
            std::string::npos);
  // A Slurm job that is not an array job.
  std::string plain = error("auto", Env{{{"SLURM_JOB_ID", "42"}}});
  EXPECT_NE(plain.find("Slurm job 42, but not an array job"), std::string::npos) << plain;
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
