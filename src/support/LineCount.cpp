#include "mlgo/support/LineCount.h"

#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

namespace mlgo {

llvm::Expected<size_t> countLines(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: %s", path.c_str(), buffer.getError().message().c_str());
  return static_cast<size_t>(std::count((*buffer)->getBufferStart(), (*buffer)->getBufferEnd(), '\n'));
}

} // namespace mlgo
