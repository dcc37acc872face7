// Moving a finished file into place, whichever file systems the two names
// are on.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlgo {

/// Renames `from` to `to`, replacing `to` atomically. When they are on
/// different file systems (EXDEV: a --explicit_temps_dir on a tmpfs), the
/// data is copied to a temporary sibling of `to`, synced, and renamed over
/// it, then `from` is removed: `to` is never seen half written. A failed
/// write is a WriteError.
llvm::Error moveFile(llvm::StringRef from, llvm::StringRef to);

/// The same into the open directory `dir` under the single component `name`
/// (renameat: nothing on the way to `dir` is looked up again, so no link
/// planted there is followed). `shownTo` names the destination in errors.
llvm::Error moveFileInto(llvm::StringRef from, int dir, llvm::StringRef name, llvm::StringRef shownTo);

/// Copies `from` (kept) to `name` in the open directory `dir` through a
/// synced temporary sibling renamed over it: never through a link there.
llvm::Error copyFileInto(llvm::StringRef from, int dir, llvm::StringRef name, llvm::StringRef shownTo);

/// The same from a file already open (read from its start; the descriptor
/// stays open): what a reader checked is what is copied, whatever is put in
/// its place by name meanwhile. `shownFrom` names it in errors.
llvm::Error copyDescriptorInto(int from, llvm::StringRef shownFrom, int dir, llvm::StringRef name,
                               llvm::StringRef shownTo);

} // namespace mlgo
