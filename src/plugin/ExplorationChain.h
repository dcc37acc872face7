// The inliner plugin's half of harvest-logs --explore's fork chains and
// forked rollouts (docs/harvest-exploration.md#exploring-by-forking and
// #forked-rollouts: ORDER star, below). A module's base compile runs
// with -mlgo-inliner-explore=K:ORDER:TIMEOUT:DIR. At every decision that
// the next exploration could flip (the least certain so far after the last
// flip, or the first after it), the compiler forks a paused checkpoint and
// drops the previous one; when this trajectory's compile is over, it
// resumes the last checkpoint, which takes the other decision there and
// follows the policy on: exactly the trajectory harvest-logs' next round
// would replay, without compiling its prefix again. Each explored
// trajectory writes DIR/t<i>/ (training.log, sites.jsonl, native.o,
// compile.stderr); its parent writes DIR/t<i>/status.json once it ended.
// harvest-logs adopts a trajectory only when its decisions start with the
// prefix it would have replayed (explore/ForkChains.cpp), so anything that goes wrong
// here costs a compile, not a wrong result.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>

namespace mlgo::plugin {

struct ChainSpec {
  unsigned Trajectories = 0; // K: explored trajectories after the base
  /// Margin: the least |cost margin| after the last flip; Logits: the least
  /// |logit difference|; First: the first decision after the last flip.
  /// Star: per-decision rollouts of the base (--explore_order=rollouts:first
  /// and search:first's first sweep): at each of its first K steps the base
  /// forks a trajectory that flips that step and follows the policy, waits
  /// for it, and goes on; trajectory i flipped step i-1.
  enum class Order { Margin, Logits, First, Star } How = Order::Margin;
  double TimeoutSeconds = 60; // each explored trajectory's own compile
  std::string Dir;
};

/// "K:margin|logits|first:TIMEOUT_SECONDS:DIR".
llvm::Expected<ChainSpec> parseChainSpec(llvm::StringRef text);

class ExplorationChain {
public:
  /// `then` is the policy the trajectories follow (recorded in status.json);
  /// `onResume(dir)` runs in a resumed checkpoint before it decides again.
  ExplorationChain(ChainSpec spec, std::string then, std::function<void(const std::string &)> onResume);

  /// Decision `step` of this trajectory, which the policy decided as
  /// `decision` with `certainty`: the decision this process takes (the
  /// other one in a checkpoint that was resumed here).
  bool atDecision(size_t step, double certainty, bool decision);

  /// This trajectory's compile ended with `status`: its parent learns it,
  /// then the last checkpoint (if any) runs as the next trajectory, and
  /// this process waits for it (killing it once its whole compile, prefix
  /// included, took the timeout). A failed trajectory is no parent. The
  /// base compile that itself took longer than the timeout leaves
  /// DIR/base-overran and ends as the harvester's timeout would end it
  /// (SIGKILL), so that forking changes no module's outcome.
  void finish(int status);

  unsigned trajectory() const { return Index; }

  /// Test seam: with MLGO_EXPLORE_CHAIN_FAULT=link:I, explored trajectory
  /// I's directory becomes a symbolic link to its files, which harvest-logs
  /// must not adopt through.
  void plantLinkIfAsked() const;

private:
  struct Checkpoint {
    pid_t Pid = -1;
    int Go = -1, Done = -1;
    size_t Step = 0;
    double PrefixSeconds = 0; // the compile's time up to the fork
  };
  void dropPending();
  std::string trajectoryDir(unsigned index) const;
  void becomeTrajectory(size_t flippedStep);
  /// Star: forks the rollout of `step` and waits for it; the decision this
  /// process takes (the other one in the rollout).
  bool rollOut(size_t step, bool decision);
  /// Waits for trajectory `index` (pid, its done pipe) to end, killing it
  /// after `budget` seconds, and writes its status.json.
  void awaitTrajectory(unsigned index, pid_t pid, int done, size_t step, double budget, bool started);

  ChainSpec Spec;
  std::string Then;
  std::function<void(const std::string &)> OnResume;
  unsigned Index = 0; // 0: the base trajectory
  size_t From = 0;    // the first step the next flip may be
  std::optional<double> Least;
  std::optional<Checkpoint> Pending;
  int DoneFd = -1; // to the parent trajectory: this one's compile ended
  /// When this trajectory's compile would have started had it run whole
  /// (its prefix's time counts, its pause does not): the timeout is a
  /// whole compile's, as when a round compiles it.
  std::chrono::steady_clock::time_point Started;
};

} // namespace mlgo::plugin
