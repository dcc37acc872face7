// A module's `.cmd` file (and the `.llvmcmd` section it is copied from): the
// cc1 arguments, each followed by a NUL byte.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <vector>

namespace mlgo {

/// The NUL-separated arguments of a `.llvmcmd` section, as raw bytes. The
/// empty field after the final NUL is not an argument and is dropped.
std::vector<llvm::StringRef> splitCommandLineSection(llvm::StringRef section);

} // namespace mlgo
