// The ThinLTO index a distributed-ThinLTO object names (-fthinlto-index=):
// the object is data from someone else, so the path it names is confined to
// the build directory and the file must be a ThinLTO index.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace mlgo {

struct ThinLTOIndexRead {
  std::unique_ptr<llvm::MemoryBuffer> Buffer; // null on failure
  const char *Reason = nullptr; // thinlto_index_missing, thinlto_index_outside_base, thinlto_index_invalid
  std::string Detail;
};

/// Reads the index at `path` (already joined onto `baseDir`). The file must
/// resolve, after every symlink, to a regular file inside `baseDir` ("" =
/// the current directory), as opened (no window between check and read),
/// and hold LLVM bitcode with a module summary index.
ThinLTOIndexRead readThinLTOIndex(const std::string &path, llvm::StringRef baseDir);

} // namespace mlgo
