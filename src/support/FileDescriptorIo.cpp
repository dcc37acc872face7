#include "mlgo/support/FileDescriptorIo.h"

#include <cerrno>
#include <sys/types.h>
#include <unistd.h>

namespace mlgo {
namespace {

// `transfer` (read or write) until `size` bytes moved; false on an error or
// when it moves nothing (end of file, a closed pipe).
template <typename Byte, typename Transfer> bool whole(int fd, Byte *at, size_t size, Transfer transfer) {
  while (size > 0) {
    ssize_t n = transfer(fd, at, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    at += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace

bool writeAll(int fd, const void *data, size_t size) {
  return whole(fd, static_cast<const char *>(data), size, ::write);
}

bool readAll(int fd, void *data, size_t size) { return whole(fd, static_cast<char *>(data), size, ::read); }

long readUpTo(int fd, void *data, size_t size) {
  char *at = static_cast<char *>(data);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, at + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    got += static_cast<size_t>(n);
  }
  return static_cast<long>(got);
}

} // namespace mlgo
