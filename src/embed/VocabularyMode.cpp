#include "mlgo/embed/VocabularyMode.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlgo {

llvm::StringRef embeddingModeName(EmbeddingMode mode) { return mode == EmbeddingMode::MIR ? "mir" : "llvm"; }

llvm::Expected<llvm::json::Value> readVocabularyJson(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read: %s", buffer.getError().message().c_str());
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return llvm::createStringError("not JSON: %s", llvm::toString(json.takeError()).c_str());
  return json;
}

llvm::Expected<EmbeddingMode> vocabularyMode(llvm::StringRef path) {
  llvm::Expected<llvm::json::Value> json = readVocabularyJson(path);
  if (!json)
    return llvm::createStringError("%s: not a vocabulary: %s", path.str().c_str(),
                                   llvm::toString(json.takeError()).c_str());
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return llvm::createStringError("%s: not a vocabulary: the JSON is not an object of sections", path.str().c_str());
  for (const char *section : {"CommonOperands", "PhysicalRegisters", "VirtualRegisters"})
    if (root->get(section))
      return EmbeddingMode::MIR;
  return EmbeddingMode::LLVM;
}

llvm::Error checkVocabularyMode(llvm::StringRef path, EmbeddingMode mode) {
  auto found = vocabularyMode(path);
  if (!found)
    return found.takeError();
  if (*found == mode)
    return llvm::Error::success();
  if (*found == EmbeddingMode::MIR)
    return llvm::createStringError("%s: a MIR2Vec vocabulary (sections CommonOperands, PhysicalRegisters, "
                                   "VirtualRegisters) given with --mode=llvm; use --mode=mir for machine IR",
                                   path.str().c_str());
  return llvm::createStringError("%s: an IR2Vec vocabulary (no CommonOperands, PhysicalRegisters or "
                                 "VirtualRegisters section) given with --mode=mir; use --mode=llvm for LLVM IR",
                                 path.str().c_str());
}

} // namespace mlgo
