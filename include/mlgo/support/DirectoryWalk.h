// A deterministic recursive directory walk with the matching rules of
// Python's pathlib glob("**/*<suffix>"), which the reference tools use, but
// with each directory's entries sorted by byte value.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <initializer_list>
#include <string>

namespace mlgo {

struct WalkEntry {
  std::string Relative; // relative to the walk root, '/'-separated
  bool IsDirectory;
};

/// Calls `visit` for every entry below `root` whose name ends in one of
/// `suffixes`:
/// files, symlinks to files and directories alike, dot-entries included.
/// A directory's own matches come before those of its subdirectories;
/// symlinked directories are not descended. Subdirectories that cannot be
/// read are logged as warnings. An unreadable `root` is an error.
llvm::Error walkMatching(llvm::StringRef root, std::initializer_list<llvm::StringRef> suffixes,
                         const std::function<void(const WalkEntry &)> &visit);

} // namespace mlgo
