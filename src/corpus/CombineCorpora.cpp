#include "mlgo/corpus/CombineCorpora.h"

#include "mlgo/corpus/ModuleNaming.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <map>

namespace mlgo {
namespace {

// Key order does not matter for equality; nlohmann's ordered_json compares
// in order, so compare through the unordered form.
bool sameFields(const nlohmann::ordered_json &a, const nlohmann::ordered_json &b) {
  return nlohmann::json::parse(a.dump()) == nlohmann::json::parse(b.dump());
}

} // namespace

llvm::Expected<CombinedCorpus> combineCorpora(llvm::StringRef root) {
  std::string rootPath = root.str();
  std::vector<std::string> children;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(rootPath, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = baseName(it->path()).str();
    if (!llvm::sys::fs::is_directory(it->path())) // follows symlinks, as the reference's os.path.isdir
      continue;
    if (name[0] == '.') {
      log::info("skipping hidden directory " + joinPath(rootPath, name));
      continue;
    }
    if (llvm::sys::fs::exists(joinPath(it->path(), CorpusDescriptionFile)))
      children.push_back(std::move(name));
  }
  if (ec)
    return llvm::createStringError(ec, "%s: cannot open directory: %s", rootPath.c_str(), ec.message().c_str());
  std::sort(children.begin(), children.end());

  CombinedCorpus combined;
  std::string referencePath;
  std::map<std::string, std::string> ownerOfPath;
  for (const std::string &child : children) {
    std::string subDir = joinPath(rootPath, child);
    std::string manifest = joinPath(subDir, CorpusDescriptionFile);
    log::info("processing " + manifest);
    auto description = readCorpusDescription(subDir);
    if (!description)
      return description.takeError();
    if (referencePath.empty()) {
      combined.Description.Fields = description->Fields;
      referencePath = manifest;
    } else if (!sameFields(combined.Description.Fields, description->Fields)) {
      return llvm::createStringError("Input corpora differ by more than modules: %s has %s but %s has %s",
                                     referencePath.c_str(), combined.Description.Fields.dump().c_str(),
                                     manifest.c_str(), description->Fields.dump().c_str());
    }
    for (const std::string &name : description->Modules) {
      if (llvm::Error e = checkModuleName(name))
        return llvm::createStringError("%s: %s, so it does not stay inside its sub-corpus", manifest.c_str(),
                                       llvm::toString(std::move(e)).c_str());
      std::string path = child + "/" + name;
      std::string key = normalizePath(path);
      auto [owner, isNew] = ownerOfPath.emplace(key, manifest);
      if (!isNew)
        return llvm::createStringError("module '%s' of %s maps to the same path as a module of %s", name.c_str(),
                                       manifest.c_str(), owner->second.c_str());
      combined.Description.Modules.push_back(std::move(path));
    }
    combined.SubCorpora.push_back(child);
  }
  return combined;
}

} // namespace mlgo
