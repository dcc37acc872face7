// Whole reads and writes on a file descriptor, retried on EINTR and short
// counts: the compile server's protocol and the inliner plugin's fork
// chains (which link only this of the support library).
#pragma once

#include <cstddef>

namespace mlgo {

/// Writes all `size` bytes; false on an error or a closed pipe.
bool writeAll(int fd, const void *data, size_t size);

/// Reads exactly `size` bytes; false on an error or an early end of file.
bool readAll(int fd, void *data, size_t size);

/// Reads up to `size` bytes, fewer only at the end of file; -1 on an error.
long readUpTo(int fd, void *data, size_t size);

} // namespace mlgo
