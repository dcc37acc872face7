// --explore's fork chains (src/plugin/ExplorationChain.h): the base harvest's
// compiles fork the explored trajectories as they run (ChainForking), and
// each round takes the trajectories the chains already compiled instead of
// compiling them again (ChainAdoption). Both are the harvest's module
// compile hooks (harvest/ModuleCompileHooks.h).
#pragma once

#include "mlgo/harvest/ModuleCompileHooks.h"

#include <atomic>
#include <map>
#include <string>
#include <vector>

namespace mlgo {

/// A module's fork chain below OUT/explore/chains: one flat directory named
/// by a hash of the module name, so that nested module names (`a` and
/// `a/t1`) never share or reach into another module's chain.
std::string exploreChainName(const std::string &module);

/// The base harvest's side: each base compile that runs in the compile
/// server with codegen in the same child also explores up to Trajectories
/// trajectories by forking at the decisions to flip, ordered by Order
/// (margin, logits or first; star: the base's rollouts, each forked from
/// the base at its step); they are kept in OUT/explore/chains/<chain>/t<i>/
/// for the rounds. With no trajectories, a base compile still removes what
/// an earlier run's chain left of its module.
class ChainForking : public ModuleCompileHooks {
public:
  struct Settings {
    unsigned Trajectories = 0; // 0: no chains
    std::string Order;
    std::string OutputDir;
    bool ExplicitTemps = false; // --explicit_temps_dir: no chains (they are moved into OUT afterwards)
    double TimeoutSeconds = 0;
  };
  explicit ChainForking(Settings settings) : S(std::move(settings)) {}

  bool changeCompile(CompileJob &job, const std::string &work) const override;
  void changedCompileEnded(CompileOutcome &outcome, const std::string &work) const override;
  void compiled(const std::string &module, const std::string &work, bool ok) const override;

private:
  std::string chainDirectory(const std::string &work) const;
  Settings S;
};

/// A round's side: a module whose chained trajectory `Round` in ChainsDir
/// ended ok, followed `Then` and starts with the module's `Prefix` is taken
/// instead of compiled (then measured, rewarded and journaled as a compile
/// is). Every file is taken below ChainsDir through no link, as a regular
/// file, through the descriptor that was checked.
class ChainAdoption : public ModuleCompileHooks {
public:
  struct Settings {
    unsigned Round = 0;
    std::string ChainsDir, Then;
    std::map<std::string, std::vector<bool>> Prefix;
  };
  explicit ChainAdoption(Settings settings) : S(std::move(settings)) {}

  bool takeInsteadOfCompile(const std::string &module, const std::string &work, const AdvisorSetup &advisor,
                            const ModuleCommands &commands, HarvestRecord &record) const override;
  std::optional<size_t> taken() const override { return Adopted.load(); }

private:
  Settings S;
  mutable std::atomic<size_t> Adopted{0};
};

} // namespace mlgo
