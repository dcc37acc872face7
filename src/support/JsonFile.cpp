#include "mlgo/support/JsonFile.h"

#include "llvm/Support/MemoryBuffer.h"

namespace mlgo {

llvm::Expected<nlohmann::json> readJsonFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: cannot read: %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  try {
    return nlohmann::json::parse((*buffer)->getBuffer());
  } catch (const nlohmann::json::exception &e) {
    return llvm::createStringError("%s: malformed JSON: %s", path.str().c_str(), e.what());
  }
}

} // namespace mlgo
