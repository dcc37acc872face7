// The LLVM tools we are built against (opt, llc, clang of LLVM_TOOLS_BINARY_DIR):
// the compile server may stand in for them, and what they support is known
// without starting them, because they run the very libLLVM we link.
#pragma once

#include <string>

namespace mlgo {

/// The file a program name runs (PATH lookup, symlinks resolved); "" when
/// there is none.
std::string resolvedProgram(const std::string &program);

/// Whether `program` runs the `tool` ("opt", "llc", "clang") of the LLVM we
/// are built against.
bool isOwnLlvmTool(const std::string &program, const char *tool);

/// Our LLVM's `tool` (e.g. "llvm-symbolizer"), resolved; "" when it is not installed.
std::string ownLlvmTool(const char *tool);

/// Why `program`, given as --`flag`, is not our LLVM's `tool`, or "".
std::string whyNotOwnLlvmTool(const std::string &flag, const std::string &program, const char *tool);

} // namespace mlgo
