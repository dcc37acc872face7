// Temporaries a dead run left. A file written through a temporary and a
// rename (AtomicFile.h: `<stem>.tmp.<pid>.<n>`) leaves that temporary behind
// when the run is killed between the two (SIGKILL, power loss), and no later
// run would ever write that name again. A tool that holds its output's
// DirectoryLock knows that no live run of it writes there, so every
// temporary of its own files is a dead run's: it removes them when it starts.
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlgo {

/// The stem of `name` when `name` is exactly `<stem>.tmp.<digits>.<digits>`,
/// as temporaryNameIn names a temporary for `stem`; otherwise nothing.
std::optional<llvm::StringRef> temporaryStem(llvm::StringRef name);

/// Removes every entry of the directory `relative` below `root` (`root`
/// itself when `relative` is empty) whose name is a temporary of one of
/// `stems` (an allow-list of the tool's own file names: nothing else is
/// touched, however it is named). Call it only while holding the lock that
/// every writer of those files holds. Nothing is followed: the directory is
/// opened through no symbolic link below `root` (one there is an error naming
/// it), and a link named like a temporary is removed itself, never what it
/// names; a directory so named is not a temporary and stays. Each removal is
/// logged. Returns the paths removed; a missing directory holds none.
llvm::Expected<std::vector<std::string>> removeStaleTemporaries(llvm::StringRef root, llvm::StringRef relative,
                                                                const std::set<std::string, std::less<>> &stems);

/// The same for the stems `ownStem` accepts (a family of the tool's own
/// names, such as `round-<N>.jsonl`).
llvm::Expected<std::vector<std::string>> removeStaleTemporaries(llvm::StringRef root, llvm::StringRef relative,
                                                                llvm::function_ref<bool(llvm::StringRef stem)> ownStem);

} // namespace mlgo
