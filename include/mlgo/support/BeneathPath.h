// Paths below a directory the user named (an output directory, a shard, a
// harvest, the baseline cache): what lies there is someone else's data, and a
// symbolic link planted in any component (`logs/sub -> /elsewhere`) could
// send a read, a removal or a rename anywhere. These functions resolve such a
// path without following any link, in any component (docs/security.md).
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <sys/types.h>
#include <utility>

namespace mlgo {

/// An owned file descriptor, closed on destruction.
class FileDescriptor {
public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : Fd(fd) {}
  FileDescriptor(FileDescriptor &&other) noexcept : Fd(std::exchange(other.Fd, -1)) {}
  FileDescriptor &operator=(FileDescriptor &&other) noexcept;
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  ~FileDescriptor();

  int get() const { return Fd; }
  explicit operator bool() const { return Fd >= 0; }
  /// Hands the descriptor over to the caller, who closes it.
  int release() { return std::exchange(Fd, -1); }

private:
  int Fd = -1;
};

/// Why a path below a directory could not be used. Its message names the
/// path: "OUT/logs/sub: a symbolic link below OUT; never followed
/// (docs/security.md)", or "OUT/logs/sub/m0.log: No such file or directory".
class BeneathError : public llvm::ErrorInfo<BeneathError> {
public:
  static char ID;
  /// `err` is the errno; ELOOP means a symbolic link at `path`.
  BeneathError(std::string path, std::string root, int err);
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;
  const std::string &path() const { return Path; }
  bool symbolicLink() const;
  bool missing() const;

private:
  std::string Path, Root;
  int Errno;
};

/// Consumes `error` and returns true when it says that the path (or a
/// directory on its way) does not exist; otherwise leaves it as it was.
bool consumeIfMissing(llvm::Error &error);

/// Opens `relative` below the directory `root` with open(2)'s `flags`
/// (O_CLOEXEC and O_NOFOLLOW are added). `root` itself is the user's and is
/// opened as named; below it no component may be a symbolic link, "..", or
/// absolute. Uses openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) and, on a
/// kernel without it, opens one component at a time.
llvm::Expected<FileDescriptor> openBeneath(llvm::StringRef root, llvm::StringRef relative, int flags, mode_t mode = 0);

/// A regular file below `root`, open for reading. Opened without blocking,
/// so that a FIFO under that name is refused instead of hanging the reader;
/// anything but a regular file is an error naming it.
llvm::Expected<FileDescriptor> openRegularFileBeneath(llvm::StringRef root, llvm::StringRef relative);

/// The whole of a regular file below `root` (openRegularFileBeneath), mapped
/// or read; an error names it.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readFileBeneath(llvm::StringRef root, llvm::StringRef relative);

/// A file of ours at the top of a directory we were given (a journal,
/// summary.json): a regular file, never read through a symbolic link at its
/// name (the directory itself is the user's and opened as named).
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readOwnFile(llvm::StringRef path);

/// The directory that holds `relative`'s last component, open, and that
/// component: unlinkat, renameat and linkat on (Dir, Name) follow nothing.
/// With `create`, missing directories on the way are made (0755; each new
/// name synced into its parent when writes are durable, AtomicFile.h).
struct ParentBeneath {
  FileDescriptor Dir;
  std::string Name;
  std::string Shown; // root joined with relative, for messages
};
llvm::Expected<ParentBeneath> openParentBeneath(llvm::StringRef root, llvm::StringRef relative, bool create = false);

/// Removes the file `relative` below `root` (a symbolic link there is
/// removed itself). Success when it, or a directory on its way, is absent.
llvm::Error removeBeneath(llvm::StringRef root, llvm::StringRef relative);

/// rm -r of `relative` below `root`, following no link: a link (at the end
/// or anywhere inside the tree) is removed itself, never what it names.
/// Success when it, or a directory on its way, is absent.
llvm::Error removeTreeBeneath(llvm::StringRef root, llvm::StringRef relative);

/// mkdir -p of `relative` below `root`, following no link on the way; each
/// new name is synced into its parent when writes are durable.
llvm::Error makeDirectoriesBeneath(llvm::StringRef root, llvm::StringRef relative);

/// Whether `relative` names anything below `root` (a symbolic link as last
/// component counts as itself); an error when a directory on its way is a
/// link or cannot be searched.
llvm::Expected<bool> existsBeneath(llvm::StringRef root, llvm::StringRef relative);

/// Tests only: resolve one component at a time even where openat2 exists,
/// so that both paths are exercised.
void setOpenat2Enabled(bool enabled);

} // namespace mlgo
