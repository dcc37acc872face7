#include "mlgo/corpus/LinkOrder.h"

#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/Version.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

namespace mlgo {

llvm::Error writeLinkOrder(llvm::StringRef corpusDir, const RecordedLinkOrder &order) {
  nlohmann::ordered_json j;
  j["mlgo_version"] = versionString();
  j["input_type"] = order.InputType;
  j["input"] = order.Input;
  j["modules"] = order.Modules;
  return writeFileAtomically(joinPath(corpusDir, LinkOrderFile), j.dump(2) + "\n");
}

llvm::Expected<std::optional<RecordedLinkOrder>> readLinkOrder(llvm::StringRef corpusDir) {
  std::string path = joinPath(corpusDir, LinkOrderFile);
  if (!llvm::sys::fs::exists(path))
    return std::nullopt;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read %s: %s", path.c_str(),
                                   buffer.getError().message().c_str());
  auto bad = [&](const std::string &why) {
    return llvm::createStringError("%s: %s (corpus_formats/link_order.schema.json)", path.c_str(), why.c_str());
  };
  nlohmann::json j = nlohmann::json::parse((*buffer)->getBuffer(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    return bad("not a JSON object");
  RecordedLinkOrder order;
  if (!j.contains("input_type") || !j["input_type"].is_string() || !j.contains("input") || !j["input"].is_string())
    return bad("'input_type' and 'input' must be strings");
  order.InputType = j["input_type"];
  order.Input = j["input"];
  if (!j.contains("modules") || !j["modules"].is_array())
    return bad("'modules' must be an array of module names");
  for (const auto &name : j["modules"]) {
    if (!name.is_string())
      return bad("'modules' must be an array of module names");
    order.Modules.push_back(name);
  }
  return order;
}

} // namespace mlgo
