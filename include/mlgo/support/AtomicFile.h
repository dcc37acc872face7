// Output files appear whole or not at all: data goes to an unnamed or
// temporary file that is linked or renamed into place only when complete.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// A fresh temporary name: `<dir>/<stem>.tmp.<pid>.<n>`. It never ends in
/// `.bc`, so no corpus reader mistakes it for a module.
std::string temporaryNameIn(llvm::StringRef dir, llvm::StringRef stem);

/// Writes `data` to `path` through a temporary sibling and a rename.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef data);

/// Writes `data` to a new file at `path` (which must not exist). With a
/// `mode`, the file gets exactly those permission bits, whatever the umask.
llvm::Error writeNewFile(llvm::StringRef path, llvm::StringRef data, std::optional<unsigned> mode = std::nullopt);

/// Files that must appear together (one corpus module's .bc, .cmd and
/// .thinlto.bc). Each is written to an unnamed file (O_TMPFILE) in its final
/// directory, or where the file system lacks those, to a temporary name in
/// `fallbackStagingDir`; commit() links or renames them into place. A crash
/// leaves no partial file behind: unnamed files vanish with the process.
/// Whatever was not committed is discarded on destruction.
class StagedFiles {
public:
  explicit StagedFiles(std::string fallbackStagingDir) : StagingDir(std::move(fallbackStagingDir)) {}
  StagedFiles(const StagedFiles &) = delete;
  StagedFiles &operator=(const StagedFiles &) = delete;
  ~StagedFiles();

  /// Creates the destination directory if needed and writes `data`.
  llvm::Error add(llvm::StringRef finalPath, llvm::StringRef data, std::optional<unsigned> mode = std::nullopt);
  /// Makes every staged file visible under its final name, replacing any
  /// existing file atomically.
  llvm::Error commit();

private:
  struct Entry {
    std::string Final;
    int Fd = -1;           // an unnamed O_TMPFILE file
    std::string Temporary; // or a named temporary file
  };
  std::string StagingDir;
  std::vector<Entry> Entries;
};

/// mkdir -p, remembering directories already made so a hot loop over
/// thousands of modules does not repeat the system calls.
llvm::Error ensureDirectory(llvm::StringRef dir);

} // namespace mlgo
