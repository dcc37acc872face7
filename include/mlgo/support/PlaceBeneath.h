// A file below one directory we were given put at a name below another (or
// the same), following no symbolic link on either side (BeneathPath.h): how
// an exploration stages and installs its kept logs and objects.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlgo {

/// Puts the regular file `fromRelative` below `fromRoot` at `toRelative`
/// below `toRoot` (missing directories made), replacing what is there
/// atomically: a hard link of the opened file where both lie on one file
/// system (no copy, whatever its size), else a synced copy of it. The file
/// taken is the one opened and checked, whatever is put in its place by
/// name meanwhile. Writes are durable as AtomicFile.h says.
llvm::Error placeBeneath(llvm::StringRef fromRoot, llvm::StringRef fromRelative, llvm::StringRef toRoot,
                         llvm::StringRef toRelative);

} // namespace mlgo
