// Reads the embedded bitcode and command-line sections of an object file
// in-process (what `llvm-objcopy --dump-section` does, without the process).
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace mlgo {

/// The contents of the first section named `name`, as llvm-objcopy picks it:
/// ELF and COFF by section name, Mach-O by `SEGMENT,section`. nullopt when
/// there is none; an error when the section exists but has no contents
/// (ELF SHT_NOBITS) or cannot be read. The result points into `object`.
llvm::Expected<std::optional<llvm::StringRef>> findSectionContents(const llvm::object::ObjectFile &object,
                                                                   llvm::StringRef name);

/// The section names clang's -fembed-bitcode uses in `object`'s format:
/// `__LLVM,__bitcode` and `__LLVM,__cmdline` for Mach-O, `.llvmbc` and
/// `.llvmcmd` for ELF, COFF and the rest.
struct EmbeddedSectionNames {
  llvm::StringRef Bitcode;
  llvm::StringRef Cmd;
};
EmbeddedSectionNames nativeSectionNames(const llvm::object::ObjectFile &object);

} // namespace mlgo
