// Where --explicit_temps_dir keeps a module's work directory.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlgo {

/// A single path component naming module `module`'s work directory, so that
/// no module's work directory lies inside another's (modules `a` and `a/b`
/// would otherwise nest, and starting `a` would delete `a/b`'s files).
/// '%' becomes "%25" and '/' becomes "%2F", so distinct names stay distinct:
/// `a/b` -> `a%2Fb`. A name longer than 200 bytes once encoded keeps its
/// first 180 bytes followed by "%~" and a 64-bit hash of the whole name (the
/// "%~" never occurs in a short encoded name), to stay within NAME_MAX.
std::string workDirectoryName(llvm::StringRef module);

} // namespace mlgo
