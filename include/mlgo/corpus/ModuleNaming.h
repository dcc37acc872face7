// How an object path becomes a corpus module name. The name is also the
// layout: the module's files are `<output_dir>/<name>.bc` and friends, so a
// name must never climb out of the corpus.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlgo {

/// The module name for object `rel`, which its input named relative to `base`:
/// - a relative path is lexically normalised (`./a.o` -> `a.o`,
///   `x/../a.o` -> `a.o`), and each leading `..` becomes `_up`;
/// - an absolute path under `base` becomes relative to `base`;
/// - any other absolute path becomes `_abs/<path without the leading />`.
/// Already-normal relative paths are kept byte for byte, as the reference does.
llvm::Expected<std::string> moduleNameForObject(llvm::StringRef rel, llvm::StringRef base);

/// The one rule every tool applies to a module name it reads or makes: the
/// name, joined onto a corpus directory, names a file inside it. It must be
/// non-empty, relative, free of NUL bytes, and its lexically normalised form
/// must neither climb out (`..`, `../x`) nor be the corpus itself (`.`) or a
/// directory (`a/`). Names like `./a.o` or `x/../a.o` that stay inside are
/// accepted, as reference tools write them. The error says why, quoting the
/// name.
llvm::Error checkModuleName(llvm::StringRef name);

} // namespace mlgo
