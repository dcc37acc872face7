#include "mlgo/support/OutputFile.h"

#include <cerrno>

namespace mlgo {

char WriteError::ID = 0;

void WriteError::log(llvm::raw_ostream &os) const { os << "cannot write " << Path << ": " << Code.message(); }

bool WriteError::fileSystemUnusable() const {
  if (Code.category() != std::generic_category() && Code.category() != std::system_category())
    return false;
  switch (Code.value()) {
  case ENOSPC:
  case EDQUOT:
  case EROFS:
  case EIO:
    return true;
  default:
    return false; // e.g. EFBIG: this file is too large, the next may fit
  }
}

OutputFile::OutputFile(llvm::StringRef path)
    : llvm::raw_fd_ostream(path, detail::OpenCode::Code), Path(path.str()), Closed(bool(detail::OpenCode::Code)) {
} // a stream that failed to open holds no file to close

OutputFile::~OutputFile() {
  if (!Closed)
    close();
  clear_error();
}

llvm::Error OutputFile::openError() const {
  if (Code)
    return llvm::make_error<WriteError>(Path, Code);
  return llvm::Error::success();
}

llvm::Error OutputFile::finish() {
  if (Code)
    return openError();
  if (!Closed) {
    close();
    Closed = true;
  }
  std::error_code code = error();
  clear_error();
  if (code)
    return llvm::make_error<WriteError>(Path, code);
  return llvm::Error::success();
}

} // namespace mlgo
