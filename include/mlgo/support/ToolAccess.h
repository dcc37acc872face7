// What a program we run may read and execute under Landlock (ReadExecRules):
// its own installation, its interpreter when it is a script, the dynamic
// loader and the system's shared libraries, and single paths added by name.
// Used by every confined child: a compile (compile/CompileConfinement.h), the
// clang driver's job listing (corpus/DriverJob) and the link.
#pragma once

#include "mlgo/support/Landlock.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlgo {

/// `path`'s real path; "" when it cannot be resolved (it does not exist).
std::string realPathOf(llvm::StringRef path);
/// Appends `path` to `list` unless it is empty or there already.
void addPathOnce(std::vector<std::string> &list, std::string path);

/// The installation `program` belongs to: the real path of its directory's
/// parent when that directory is a `bin` (/usr/bin/clang-22 is
/// /usr/lib/llvm-22/bin/clang: /usr/lib/llvm-22), else (and instead of the
/// root) of its directory. A name without a slash is looked up in PATH, as
/// exec would. "" when it cannot be found.
std::string toolchainPrefix(llvm::StringRef program);

/// What a program at `program` may read and execute with no input of ours
/// (a compiler's capability probe, the clang driver's job listing): its
/// toolchain and the system's libraries.
ReadExecRules toolReadExecRules(const std::string &program);

/// Adds the system's shared libraries and the dynamic loader to `rules`.
void allowSystemLibraries(ReadExecRules &rules);
/// Adds `path`'s real path to `rules`' readable entries, once; nothing when
/// it does not exist.
void allowReading(ReadExecRules &rules, llvm::StringRef path);
/// Adds `path`'s real path to `rules`' executable (and readable) entries, once.
void allowExecuting(ReadExecRules &rules, llvm::StringRef path);
/// Adds `program`'s installation (toolchainPrefix) to `rules`' executable
/// entries, and its interpreter's when it is a script.
void allowToolchain(ReadExecRules &rules, const std::string &program);

} // namespace mlgo
