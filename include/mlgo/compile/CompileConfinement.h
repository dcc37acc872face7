// What a compile may read and execute (docs/security.md, "Landlock
// confinement"): a compiler's own installation, the system's shared
// libraries, the module's own input, and the files a compile's command line
// names that the rules leave out. What a whole harvest adds (plugin, model,
// vocabulary, the directories the user allows) is harvest/HarvestReadRules.h.
#pragma once

#include "mlgo/compile/InteractiveSession.h" // CompileJob, CompileOutcome
#include "mlgo/support/Landlock.h"
#include "mlgo/support/ToolAccess.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlgo {

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
