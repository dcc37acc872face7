// What a layer above a harvest adds to each module's compile, without the
// harvest knowing what it is for: exploration's fork chains (the base
// compile forks the explored trajectories, explore/ChainForking.h) and their
// adoption (a round takes a trajectory the chain already compiled,
// explore/ChainAdoption.h). A plain harvest has none. Called from the
// harvest's workers at once: implementations are thread-safe.
#pragma once

#include "mlgo/compile/CompilerDriver.h"
#include "mlgo/compile/InteractiveSession.h"
#include "mlgo/harvest/HarvestJournal.h"

#include <optional>
#include <string>

namespace mlgo {

class ModuleCompileHooks {
public:
  virtual ~ModuleCompileHooks() = default;

  /// A module's compile that runs opt and llc in one child in the plugin
  /// (the compile server's path) may be changed here; true when it was.
  /// `job`'s argv, deadline and codegen are the hook's to change.
  virtual bool changeCompile(CompileJob &job, const std::string &work) const { return false; }

  /// After a compile changeCompile changed: its outcome, as the hook reads it.
  virtual void changedCompileEnded(CompileOutcome &outcome, const std::string &work) const {}

  /// After `module`'s own compile in `work` (none when it was taken instead).
  virtual void compiled(const std::string &module, const std::string &work, bool ok) const {}

  /// Before `module`'s compile: true when its outputs (`commands`' object,
  /// `advisor`'s log and sites, `work`/compile.stderr) were put in place
  /// from elsewhere, and `record` says so; the harvest then checks and
  /// measures them as a compile's.
  virtual bool takeInsteadOfCompile(const std::string &module, const std::string &work, const AdvisorSetup &advisor,
                                    const ModuleCommands &commands, HarvestRecord &record) const {
    return false;
  }

  /// How many modules takeInsteadOfCompile took (summary.json's
  /// adopted_from_chains); nullopt when the hook takes none.
  virtual std::optional<size_t> taken() const { return std::nullopt; }
};

} // namespace mlgo
