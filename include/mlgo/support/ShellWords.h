// POSIX shell word splitting (quotes and backslashes, no expansion), for the
// `command` strings of compile_commands.json.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

/// Splits `command` into words as `sh` would before expansion: '...' is
/// literal; inside "...", backslash escapes only " \ $ ` and newline; outside
/// quotes, backslash escapes the next character. An unterminated quote or a
/// trailing backslash is an error.
llvm::Expected<std::vector<std::string>> splitShellWords(llvm::StringRef command);

} // namespace mlgo
