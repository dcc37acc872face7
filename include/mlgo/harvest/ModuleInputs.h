// What a harvest compiles a corpus module from: its bitcode and, for clang,
// its command line (the corpus' global_command_override or its .cmd),
// screened unless the user trusts the corpus (docs/security.md).
#pragma once

#include "mlgo/compile/CompilerDriver.h"
#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/harvest/Harvester.h"

#include "llvm/Support/Error.h"

#include <string>

namespace mlgo {

/// `module`'s inputs in `options`' corpus; an UnsafeCommandLineError when
/// its command line is refused.
llvm::Expected<ModuleInputs> harvestModuleInputs(const HarvestOptions &options, const CorpusDescription &corpus,
                                                 const std::string &module);

} // namespace mlgo
