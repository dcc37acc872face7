// Path arithmetic with Python's os.path semantics, which the reference tools'
// layout rules are written in.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlgo {

/// os.path.join(a, b): an absolute `b` replaces `a`; nothing is normalised.
std::string joinPath(llvm::StringRef a, llvm::StringRef b);

/// os.path.normpath for POSIX paths, except that "" stays "".
std::string normalizePath(llvm::StringRef path);

/// os.path.dirname / os.path.basename.
llvm::StringRef dirName(llvm::StringRef path);
llvm::StringRef baseName(llvm::StringRef path);

/// True when the normalised `path` is `dir` itself or lies below it.
bool isWithin(llvm::StringRef path, llvm::StringRef dir);

/// The absolute, normalised form of `path` (relative to the CWD).
std::string absolutePath(llvm::StringRef path);

} // namespace mlgo
