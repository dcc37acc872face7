// Output files appear whole or not at all: data goes to a temporary file
// that is renamed into place only when complete.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

/// A fresh temporary name: `<dir>/<stem>.tmp.<pid>.<n>`. It never ends in
/// `.bc`, so no corpus reader mistakes it for a module.
std::string temporaryNameIn(llvm::StringRef dir, llvm::StringRef stem);

/// Writes `data` to `path` through a temporary sibling and a rename.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef data);

/// Writes `data` to a new file at `path` (which must not exist). `mode` is
/// the permission bits.
llvm::Error writeNewFile(llvm::StringRef path, llvm::StringRef data, unsigned mode = 0644);

/// Files that must appear together (one corpus module's .bc, .cmd and
/// .thinlto.bc). Each is written to a temporary name in `stagingDir` (on the
/// same file system as the destinations); commit() renames them into place.
/// Whatever was not committed is removed on destruction.
class StagedFiles {
public:
  explicit StagedFiles(std::string stagingDir) : StagingDir(std::move(stagingDir)) {}
  StagedFiles(const StagedFiles &) = delete;
  StagedFiles &operator=(const StagedFiles &) = delete;
  ~StagedFiles();

  llvm::Error add(llvm::StringRef finalPath, llvm::StringRef data, unsigned mode = 0644);
  /// Creates the destination directories and renames every staged file.
  llvm::Error commit();

private:
  struct Entry {
    std::string temporary, final;
  };
  std::string StagingDir;
  std::vector<Entry> Entries;
};

} // namespace mlgo
