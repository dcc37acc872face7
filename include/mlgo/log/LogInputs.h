// The LOG arguments of training-log's subcommands.
#pragma once

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

/// Log files named directly ("-" is standard input), or every *.log below a
/// named directory, sorted.
llvm::Expected<std::vector<std::string>> expandLogInputs(const std::vector<std::string> &paths);

} // namespace mlgo
