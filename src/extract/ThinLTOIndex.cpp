#include "mlgo/extract/ThinLTOIndex.h"

#include "llvm/Bitcode/BitcodeReader.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace mlgo {
namespace {

ThinLTOIndexRead refuse(const char *reason, std::string detail) {
  ThinLTOIndexRead r;
  r.Reason = reason;
  r.Detail = std::move(detail);
  return r;
}

std::optional<std::string> realPath(const char *path) {
  char resolved[PATH_MAX];
  if (!::realpath(path, resolved))
    return std::nullopt;
  return std::string(resolved);
}

// The path the kernel resolved for an open descriptor (every symlink and
// ".." already followed), or realpath of `fallback` without /proc.
std::optional<std::string> openedPath(int fd, const std::string &fallback) {
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  char target[PATH_MAX];
  ssize_t n = ::readlink(link.c_str(), target, sizeof(target) - 1);
  if (n > 0 && target[0] == '/')
    return std::string(target, static_cast<size_t>(n));
  return realPath(fallback.c_str());
}

bool isInside(llvm::StringRef path, llvm::StringRef dir) {
  if (dir == "/")
    return path.starts_with("/");
  return path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/';
}

} // namespace

ThinLTOIndexRead readThinLTOIndex(const std::string &path, llvm::StringRef baseDir) {
  std::string base = baseDir.empty() ? "." : baseDir.str();
  std::optional<std::string> realBase = realPath(base.c_str());
  if (!realBase)
    return refuse("thinlto_index_missing", "ThinLTO index " + path + ": the build directory " + base +
                                               " cannot be resolved: " + std::strerror(errno));
  // O_NONBLOCK: a FIFO planted under the index name must not hang us.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return refuse("thinlto_index_missing", "ThinLTO index " + path + ": " + std::strerror(errno));
  struct Close {
    int Fd;
    ~Close() { ::close(Fd); }
  } closer{fd};
  std::optional<std::string> real = openedPath(fd, path);
  if (!real || !isInside(*real, *realBase))
    return refuse("thinlto_index_outside_base", "ThinLTO index " + path + " resolves to " +
                                                    real.value_or("an unknown path") +
                                                    ", outside the build directory " + *realBase +
                                                    "; an object's -fthinlto-index= must name a file inside it");
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return refuse("thinlto_index_invalid", "ThinLTO index " + path + " is not a regular file");
  auto buffer = llvm::MemoryBuffer::getOpenFile(fd, path, static_cast<uint64_t>(st.st_size),
                                                /*RequiresNullTerminator=*/false);
  if (!buffer)
    return refuse("thinlto_index_missing", "ThinLTO index " + path + ": " + buffer.getError().message());
  auto info = llvm::getBitcodeLTOInfo((*buffer)->getMemBufferRef());
  if (!info)
    return refuse("thinlto_index_invalid",
                  "ThinLTO index " + path + " is not LLVM bitcode: " + llvm::toString(info.takeError()));
  if (!info->HasSummary)
    return refuse("thinlto_index_invalid", "ThinLTO index " + path + " is bitcode without a module summary index");
  // The summary itself is not read here: libLLVM 22's summary reader
  // recurses without bound on some malformed records (a stack overflow,
  // fatal to the whole run; fuzz/regressions/bitcode). The compile that
  // uses the index reads it, in a process of its own.
  ThinLTOIndexRead r;
  r.Buffer = std::move(*buffer);
  return r;
}

} // namespace mlgo
