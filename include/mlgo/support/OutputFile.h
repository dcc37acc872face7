// Write errors as values: a failed write costs the file being written (or
// stops the run when the file system is unusable), never the process.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <system_error>

namespace mlgo {

/// A write to an output file failed: which file, and the system's reason.
class WriteError : public llvm::ErrorInfo<WriteError> {
public:
  static char ID;
  WriteError(std::string path, std::error_code code) : Path(std::move(path)), Code(code) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override { return Code; }
  const std::string &path() const { return Path; }
  std::error_code code() const { return Code; }
  /// Full, out of quota, read-only or failing: every later write to that
  /// file system fails the same way, so a long run should stop.
  bool fileSystemUnusable() const;

private:
  std::string Path;
  std::error_code Code;
};

namespace detail {
struct OpenCode {
  std::error_code Code; // filled by raw_fd_ostream's constructor, which runs after this base's
};
} // namespace detail

/// A file output stream whose errors the owner checks with finish().
/// LLVM's raw_fd_ostream calls report_fatal_error when it is destroyed with
/// an unchecked error (a full disk, a file size limit); this one clears the
/// error instead, so an early return cannot abort the process.
class OutputFile : private detail::OpenCode, public llvm::raw_fd_ostream {
public:
  /// Truncates or creates `path`; check openError() before writing.
  explicit OutputFile(llvm::StringRef path);
  ~OutputFile() override;
  /// Why the file could not be created, as a WriteError (success if it was).
  llvm::Error openError() const;
  /// Flushes and closes; the first write or close error as a WriteError.
  llvm::Error finish();

private:
  std::string Path;
  bool Closed = false;
};

} // namespace mlgo
