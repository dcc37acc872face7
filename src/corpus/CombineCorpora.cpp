#include "mlgo/corpus/CombineCorpora.h"

#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <map>
#include <sys/stat.h>

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
  DIR *dir = ::opendir(rootPath.c_str());
  if (!dir)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "%s: cannot open directory: %s",
                                   rootPath.c_str(), std::strerror(errno));
  std::vector<std::string> children;
  while (struct dirent *entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..")
      continue;
    struct stat st;
    if (::stat(joinPath(rootPath, name).c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      continue;
    if (name[0] == '.') {
      log::info("skipping hidden directory " + joinPath(rootPath, name));
      continue;
    }
    if (::stat(joinPath(joinPath(rootPath, name), CorpusDescriptionFile).c_str(), &st) == 0)
      children.push_back(std::move(name));
  }
  ::closedir(dir);
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
      std::string normal = normalizePath(name);
      if (name.empty() || name.starts_with("/") || normal == "." || normal == ".." || normal.starts_with("../"))
        return llvm::createStringError("%s: module name '%s' does not stay inside its sub-corpus", manifest.c_str(),
                                       name.c_str());
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
