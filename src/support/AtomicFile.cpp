#include "mlgo/support/AtomicFile.h"

#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mlgo {

std::string temporaryNameIn(llvm::StringRef dir, llvm::StringRef stem) {
  static std::atomic<unsigned long> Counter{0};
  std::string name = stem.str() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(Counter++);
  return joinPath(dir, name);
}

llvm::Error writeNewFile(llvm::StringRef path, llvm::StringRef data, unsigned mode) {
  std::string p = path.str();
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "cannot create %s: %s",
                                   p.c_str(), std::strerror(errno));
  const char *cursor = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, cursor, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(p.c_str());
      return llvm::createStringError(std::error_code(err, std::generic_category()), "cannot write %s: %s",
                                     p.c_str(), std::strerror(err));
    }
    cursor += n;
    left -= static_cast<size_t>(n);
  }
  // Honour the requested bits even under a restrictive umask (make_corpus
  // copies permission bits like shutil.copy).
  if (::fchmod(fd, mode) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(p.c_str());
    return llvm::createStringError(std::error_code(err, std::generic_category()), "cannot finish %s: %s",
                                   p.c_str(), std::strerror(err));
  }
  return llvm::Error::success();
}

static llvm::Error renameInto(const std::string &from, const std::string &to) {
  if (::rename(from.c_str(), to.c_str()) == 0)
    return llvm::Error::success();
  int err = errno;
  ::unlink(from.c_str());
  return llvm::createStringError(std::error_code(err, std::generic_category()), "cannot rename into %s: %s",
                                 to.c_str(), std::strerror(err));
}

llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef data) {
  std::string dir = dirName(path).str();
  std::string temporary = temporaryNameIn(dir, baseName(path));
  if (llvm::Error e = writeNewFile(temporary, data))
    return e;
  return renameInto(temporary, path.str());
}

StagedFiles::~StagedFiles() {
  for (const Entry &e : Entries)
    ::unlink(e.temporary.c_str());
}

llvm::Error StagedFiles::add(llvm::StringRef finalPath, llvm::StringRef data, unsigned mode) {
  std::string temporary = temporaryNameIn(StagingDir, "staged");
  if (llvm::Error e = writeNewFile(temporary, data, mode))
    return e;
  Entries.push_back({std::move(temporary), finalPath.str()});
  return llvm::Error::success();
}

llvm::Error StagedFiles::commit() {
  for (const Entry &e : Entries) {
    llvm::StringRef dir = dirName(e.final);
    if (!dir.empty())
      if (std::error_code ec = llvm::sys::fs::create_directories(dir))
        return llvm::createStringError(ec, "cannot create directory %s: %s", dir.str().c_str(),
                                       ec.message().c_str());
  }
  for (size_t i = 0; i < Entries.size(); ++i) {
    if (llvm::Error e = renameInto(Entries[i].temporary, Entries[i].final)) {
      // Keep the module all-or-nothing: undo the renames already done.
      for (size_t j = 0; j < i; ++j)
        ::unlink(Entries[j].final.c_str());
      Entries.erase(Entries.begin(), Entries.begin() + static_cast<long>(i) + 1);
      return e;
    }
  }
  Entries.clear();
  return llvm::Error::success();
}

} // namespace mlgo
