// What the link of --link may read, and the objects it refuses
// (docs/security.md, "The link step"). The objects are compiled from a
// corpus, so they are data from someone else: a module's
// `#pragma comment(lib, ...)` (!llvm.dependent-libraries) or
// !llvm.linker.options becomes a section that asks the linker to open a
// file the corpus names, which would read a file outside the corpus into
// the output (or /dev/zero into memory). Such an object is not linked, and
// the linker runs confined to an allow-list of what it may read.
#pragma once

#include "mlgo/evaluate/LinkStep.h"
#include "mlgo/support/Landlock.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

/// What the object open at `fd` (`shown` in messages) asks the linker to do
/// beyond linking its own contents: each entry names the section or load
/// command and what it holds (".deplibs: 'm', '/etc/passwd'"). Empty when
/// nothing. ELF (SHT_LLVM_DEPENDENT_LIBRARIES, SHT_LLVM_LINKER_OPTIONS),
/// COFF (.drectve) and Mach-O (LC_LINKER_OPTION) objects are read; any other
/// format is an error (the link reads no object it cannot check). The file
/// is mapped, not read into memory.
llvm::Expected<std::vector<std::string>> linkDirectives(int fd, llvm::StringRef shown);

/// What the linker may read and execute: its own installation (and, for a
/// compiler driver, the linker it runs: -fuse-ld=, else `ld` in PATH), the
/// system's libraries, the staged objects' directory, the --link_extra
/// files, the files and directories the template itself names (the user's
/// own: `-L DIR`, `-Wl,-T,script`, an archive) and `alsoReadable`
/// (--compiler_readable_dir).
ReadExecRules linkReadExecRules(const LinkSettings &settings, const std::string &objectsDir,
                                const std::vector<std::string> &alsoReadable);

} // namespace mlgo
