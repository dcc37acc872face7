// A corpus' driver-form command line (a .cmd or global_command_override that
// does not start with -cc1) turned into the one cc1 line clang-22's own
// driver would run for it, so that the line harvest-logs screens is the line
// it runs (docs/security.md).
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

/// The cc1 arguments (starting with "-cc1", without the input and `-o`)
/// that the driver of `clangPath` plans for compiling `input` (a bitcode
/// file; need not exist) to an object with `args` and `-c`: `clangPath
/// ... -###` in a child confined to a temporary directory and killed after
/// 30 s, its plan read back. An error when the driver refuses the line or
/// plans anything but exactly one cc1 job that emits an object (another
/// program such as an assembler or a linker, several jobs, no object, ...).
llvm::Expected<std::vector<std::string>> cc1LineOfDriverLine(llvm::ArrayRef<std::string> args,
                                                             llvm::StringRef clangPath, llvm::StringRef input);

} // namespace mlgo
