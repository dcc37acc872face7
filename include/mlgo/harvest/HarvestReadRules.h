// What every compile of a harvest may read and execute, whatever its module
// (docs/security.md, "Landlock confinement"): compile/CompileConfinement's
// rules for the run's compilers, plus what the harvest itself hands them.
#pragma once

#include "mlgo/harvest/Harvester.h"
#include "mlgo/support/Landlock.h"

namespace mlgo {

/// Executable: each compiler's installation (and, for a compiler that is a
/// script, its interpreter's) and the dynamic loader; readable besides: the
/// system's shared libraries, the compile server's libraries, the plugin,
/// the policy model, the IR2Vec vocabulary and --compiler_readable_dir.
ReadExecRules harvestReadExecRules(const HarvestOptions &options);

} // namespace mlgo
