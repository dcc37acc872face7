// Names read from input (a log's feature names, ...) that become file names:
// they must name one file inside the directory they are joined to.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlgo {

/// Success when `name` is a single safe path component: not empty, not "."
/// or "..", no '/', no NUL byte, at most 255 - `suffixLength` bytes (so that
/// the name plus its suffix fits NAME_MAX). Otherwise an error saying why,
/// which begins with `what` (e.g. "feature name").
llvm::Error checkPathComponent(llvm::StringRef name, llvm::StringRef what, size_t suffixLength = 0);

} // namespace mlgo
