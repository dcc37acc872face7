// Output files appear whole or not at all: data goes to an unnamed or
// temporary file that is linked or renamed into place only when complete.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace mlgo {

/// Durability policy (process-wide, default on): every file we write is
/// fdatasync'ed before it is renamed or linked into place, and its directory
/// is fsync'ed after (or, under group commit, all of them are made durable by
/// one syncfs), so that a journal line naming the file (written later) never
/// outlives the file's contents after a power loss. Off (the tools'
/// --no_fsync), outputs are still atomic for crashes of the process, not of
/// the machine. Every sync goes through the sync hook (SyncHook.h), where
/// tests observe them.
void setDurableWrites(bool durable);
bool durableWrites();

/// Group commit (JournalAppender::setGroupCommit): while deferred, the
/// per-file and per-directory syncs below are skipped, because one syncfs()
/// of the file system, made before the journal lines that name those files
/// are written, makes them all durable at once.
void setSyncDeferred(bool deferred);

/// fdatasync(fd), when durable; an error names `path`.
llvm::Error syncFileDescriptor(int fd, llvm::StringRef path);
/// fdatasync of the file at `path` (written by another process), when durable.
llvm::Error syncFile(llvm::StringRef path);
/// fsync of a directory, making the names made in it durable, when durable.
llvm::Error syncDirectory(llvm::StringRef dir);
/// The same for a directory already open (`dir` names it in an error).
llvm::Error syncDirectoryDescriptor(int fd, llvm::StringRef dir);

/// Whether StagedFiles may use O_TMPFILE (default: when /proc is mounted).
/// Off, it stages to named temporary files: for file systems whose O_TMPFILE
/// misbehaves, and so that tests run both paths.
void setUnnamedFilesEnabled(bool enabled);

/// A fresh temporary name: `<dir>/<stem>.tmp.<pid>.<n>`. It never ends in
/// `.bc`, so no corpus reader mistakes it for a module.
std::string temporaryNameIn(llvm::StringRef dir, llvm::StringRef stem);

/// Writes `data` to `path` through a temporary sibling and a rename. (Test
/// seam: MLGO_KILL_BEFORE_RENAME=<path's last component> kills the process
/// between the two, leaving the temporary as a killed run would.)
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef data);

/// Writes `data` to a new file at `path` (which must not exist). With a
/// `mode`, the file gets exactly those permission bits, whatever the umask.
llvm::Error writeNewFile(llvm::StringRef path, llvm::StringRef data, std::optional<unsigned> mode = std::nullopt);
/// The same as the single component `name` in the open directory `dir`
/// (never through a link there); `shown` names it in errors.
llvm::Error writeNewFileAt(int dir, llvm::StringRef name, llvm::StringRef shown, llvm::StringRef data);

/// Streams a large output file: data goes to a temporary sibling, which
/// commit() syncs (when durable) and renames over `path`. Destroyed without a
/// commit, the temporary is removed.
class AtomicFileWriter {
public:
  AtomicFileWriter() = default;
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  ~AtomicFileWriter();

  llvm::Error open(llvm::StringRef path);
  llvm::Error write(llvm::StringRef data);
  llvm::Error commit();
  uint64_t bytesWritten() const { return Written; }

private:
  int Fd = -1;
  std::string Final, Temporary;
  uint64_t Written = 0;
};

/// Files that must appear together (one corpus module's .bc, .cmd and
/// .thinlto.bc). Each is written to an unnamed file (O_TMPFILE) in its final
/// directory, or where the file system lacks those, to a temporary name in
/// `fallbackStagingDir`; commit() links or renames them into place. A final
/// directory on another file system than `fallbackStagingDir` (a mount in
/// the output) keeps its temporaries and backups in itself instead, since
/// rename and link cannot cross file systems. A crash
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
  /// existing file atomically. When one fails, the names made visible before
  /// it are rolled back: new names are removed, and files that replaced an
  /// older version get the older version back (it is kept under a backup
  /// name until the commit is complete).
  llvm::Error commit();

private:
  struct Entry {
    std::string Final;
    int Fd = -1;           // an unnamed O_TMPFILE file
    std::string Temporary; // or a named temporary file
    std::string Backup;    // the older file at Final, while committing
    std::string Stage;     // where its temporaries and backup go: same file system as Final
    bool Created = false;  // Final did not exist before the commit
  };
  void rollBack(size_t count);
  std::string stagingDirFor(const std::string &dir);
  std::string StagingDir;
  std::optional<dev_t> StagingDevice;
  std::vector<Entry> Entries;
};

/// mkdir -p, remembering directories already made so a hot loop over
/// thousands of modules does not repeat the system calls.
llvm::Error ensureDirectory(llvm::StringRef dir);

} // namespace mlgo
