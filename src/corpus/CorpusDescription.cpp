#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/corpus/ModuleNaming.h"

#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/PythonJson.h"

#include "llvm/Support/MemoryBuffer.h"

namespace mlgo {

std::string CorpusDescription::serialize() const {
  nlohmann::ordered_json json = Fields;
  json["modules"] = Modules;
  return dumpPythonJson(json);
}

bool CorpusDescription::hasThinLTO() const {
  auto it = Fields.find("has_thinlto");
  return it != Fields.end() && it->is_boolean() && it->get<bool>();
}

llvm::Error writeCorpusDescription(llvm::StringRef dir, const CorpusDescription &description) {
  return writeFileAtomically(joinPath(dir, CorpusDescriptionFile), description.serialize());
}

llvm::Expected<CorpusDescription> readCorpusDescription(llvm::StringRef dir) {
  std::string path = joinPath(dir, CorpusDescriptionFile);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: cannot read: %s", path.c_str(),
                                   buffer.getError().message().c_str());
  nlohmann::ordered_json json;
  try {
    json = parsePythonJson((*buffer)->getBuffer());
  } catch (const nlohmann::json::exception &e) {
    return llvm::createStringError("%s: malformed JSON: %s", path.c_str(), e.what());
  }
  if (!json.is_object())
    return llvm::createStringError("%s: expected a JSON object at the top level", path.c_str());
  auto modules = json.find("modules");
  if (modules == json.end())
    return llvm::createStringError("%s: no \"modules\" key", path.c_str());
  if (!modules->is_array())
    return llvm::createStringError("%s: \"modules\" is not a list", path.c_str());
  CorpusDescription description;
  for (const auto &name : *modules) {
    if (!name.is_string())
      return llvm::createStringError("%s: \"modules\" holds a non-string entry: %s", path.c_str(), name.dump().c_str());
    description.Modules.push_back(name.get<std::string>());
  }
  for (auto it = json.begin(); it != json.end(); ++it)
    if (it.key() != "modules")
      description.Fields[it.key()] = it.value();
  return description;
}

llvm::Expected<CorpusDescription> readCheckedCorpusDescription(llvm::StringRef dir) {
  auto corpus = readCorpusDescription(dir);
  if (!corpus)
    return corpus.takeError();
  for (const std::string &name : corpus->Modules)
    if (llvm::Error e = checkModuleName(name))
      return llvm::createStringError("%s/%s: %s", dir.str().c_str(), CorpusDescriptionFile,
                                     llvm::toString(std::move(e)).c_str());
  return corpus;
}

} // namespace mlgo
