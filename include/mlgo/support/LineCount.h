// How many lines a file of ours has: a sites file must hold one line per
// decision of its log.
#pragma once

#include "llvm/Support/Error.h"

#include <cstddef>
#include <string>

namespace mlgo {

/// The number of newline-terminated lines of the file at `path`.
llvm::Expected<size_t> countLines(const std::string &path);

} // namespace mlgo
