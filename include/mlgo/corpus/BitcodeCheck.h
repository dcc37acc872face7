// The check every extracted module passes before it is written.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

/// Succeeds when `bytes` is LLVM bitcode (raw or wrapped) whose module list
/// parses: the cheap structural check of BitReader, without materialising
/// any function.
llvm::Error checkBitcode(llvm::StringRef bytes);

/// What a module asks of the linker that links its object: its
/// !llvm.dependent-libraries (`#pragma comment(lib, ...)`, ELF .deplibs)
/// and !llvm.linker.options, each with the strings it names. A linker
/// honours them by opening the files they name, so harvest-logs --link
/// refuses such an object (docs/security.md). Empty when none.
llvm::Expected<std::vector<std::string>> linkerDirectives(llvm::StringRef bytes);

/// The source_filename of the first module in `bytes` (what clang's
/// module identifier is when the build compiles that file again).
llvm::Expected<std::string> bitcodeSourceFileName(llvm::StringRef bytes);

/// True when `bytes` starts with the raw (BC C0 DE) or wrapper (DE C0 17 0B)
/// bitcode magic.
bool hasBitcodeMagic(llvm::StringRef bytes);

} // namespace mlgo
