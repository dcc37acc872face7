// A linker concatenates the .llvmbc and .llvmcmd sections of the objects it
// links (executables, shared libraries, `ld -r` output): these split the
// merged sections back into one bitcode file and one cc1 command line per
// object, in link order.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace mlgo {

/// The bitcode files in a merged bitcode section, in order. Each piece runs
/// from its magic through its last top-level block (a wrapper header, as
/// Mach-O uses, through the payload it declares). Zero bytes between pieces
/// (alignment padding) are skipped, except that a wrapped file keeps the
/// zeros clang pads it with to a multiple of 16 bytes. An error names the byte offset where the
/// section stops being bitcode.
llvm::Expected<std::vector<llvm::StringRef>> splitBitcodeSection(llvm::StringRef section);

/// The cc1 command lines in a merged command-line section, in order: a new
/// one starts at each `-cc1` argument, and each keeps its NUL terminators.
/// NUL bytes before the first `-cc1` (padding) are skipped; any other text
/// there is an error.
llvm::Expected<std::vector<llvm::StringRef>> splitCommandLines(llvm::StringRef section);

/// The value of `-main-file-name` in a cc1 command line (the source file as
/// the driver named it), if present and not empty.
std::optional<llvm::StringRef> mainFileName(llvm::StringRef commandLine);

} // namespace mlgo
