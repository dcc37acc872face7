// What a harvest's compiles may read and execute (docs/security.md,
// "Landlock confinement"): the compiler's own installation, the system's
// shared libraries, the module's own input, the files the harvest itself
// passes (plugin, model, vocabulary) and the directories the user allows.
#pragma once

#include "mlgo/harvest/Harvester.h"
#include "mlgo/harvest/InteractiveSession.h" // CompileJob, CompileOutcome
#include "mlgo/support/Landlock.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlgo {

/// The installation `program` belongs to: the real path of its directory's
/// parent when that directory is a `bin` (/usr/bin/clang-22 is
/// /usr/lib/llvm-22/bin/clang: /usr/lib/llvm-22), else (and instead of the
/// root) of its directory. A name without a slash is looked up in PATH, as
/// exec would. "" when it cannot be found.
std::string toolchainPrefix(llvm::StringRef program);

/// What every compile of the run may read and execute, whatever its module.
/// Executable: each compiler's installation (and, for a compiler that is a
/// script, its interpreter's) and the dynamic loader; readable besides: the
/// system's shared libraries, the plugin, the policy model, the IR2Vec
/// vocabulary, --compiler_readable_dir and --compiler_writable_dir.
ReadExecRules harvestReadExecRules(const HarvestOptions &options);

/// What a compiler at `program` may read and execute with no input of a
/// corpus (its capability probe).
ReadExecRules toolReadExecRules(const std::string &program);

/// Adds `path`'s real path to `rules`' readable entries, once; nothing when
/// it does not exist.
void allowReading(ReadExecRules &rules, llvm::StringRef path);
/// Adds `path`'s real path to `rules`' executable (and readable) entries, once.
void allowExecuting(ReadExecRules &rules, llvm::StringRef path);
/// Adds `program`'s installation (toolchainPrefix) to `rules`' executable
/// entries, and its interpreter's when it is a script.
void allowToolchain(ReadExecRules &rules, const std::string &program);

/// `rules` and one module's own inputs: its bitcode, and the ThinLTO index
/// beside it in the corpus when there is one, as files (not the corpus
/// directory: another module's file, or a shared object planted in the
/// corpus, stays unreadable). Each only when its real path lies inside the
/// corpus: a module file that is a link to a file elsewhere is not granted.
ReadExecRules withModuleInputs(ReadExecRules rules, const std::string &bitcode, const std::string &corpusDir);

/// The files a module's command line names (an argument, or
/// the value after its '=') that exist but that a compile under `rules` and
/// `writable` may not read.
std::vector<std::string> unreadableInputs(const std::vector<std::string> &commandLine, const ReadExecRules &rules,
                                          const std::vector<std::string> &writable);

/// A confined compile that failed, of a module whose command line names
/// inputs it may not read: the detail names them and the way to allow them.
void explainUnreadableInputs(CompileOutcome &outcome, const std::vector<std::string> &commandLine,
                             const CompileJob &job);

} // namespace mlgo
