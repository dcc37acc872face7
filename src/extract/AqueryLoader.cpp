#include "mlgo/extract/InputLoaders.h"

#include "mlgo/support/Log.h"

#include "mlgo/support/JsonFile.h"

#include <nlohmann/json.hpp>

namespace mlgo {

llvm::Expected<LoadedInput> loadBazelAquery(llvm::StringRef path, llvm::StringRef objBaseDir) {
  auto parsed = readJsonFile(path);
  if (!parsed)
    return parsed.takeError();
  nlohmann::json graph = std::move(*parsed);
  if (!graph.is_object() || !graph.contains("actions") || !graph["actions"].is_array())
    return llvm::createStringError("%s: no \"actions\" list; expected the output of "
                                   "`bazel aquery --output=jsonproto`",
                                   path.str().c_str());

  const nlohmann::json *link = nullptr;
  size_t linkIndex = 0, linkCount = 0;
  const nlohmann::json &actions = graph["actions"];
  for (size_t i = 0; i < actions.size(); ++i) {
    const nlohmann::json &action = actions[i];
    // Any mnemonic that is not the string "CppLink" (a number, null) is not a link.
    auto mnemonic = action.is_object() ? action.find("mnemonic") : action.end();
    if (mnemonic != action.end() && *mnemonic == "CppLink") {
      link = &action;
      linkIndex = i;
      ++linkCount;
    }
  }
  if (linkCount > 1)
    log::warning(path + ": found " + std::to_string(linkCount) +
                 " CppLink actions; using the last one, as the reference extract_ir does");
  std::vector<std::string> args;
  if (link) {
    auto arguments = link->find("arguments");
    if (arguments != link->end()) {
      if (!arguments->is_array())
        return llvm::createStringError("%s: action %zu: \"arguments\" is not a list", path.str().c_str(),
                                       linkIndex + 1);
      for (const auto &a : *arguments) {
        if (!a.is_string())
          return llvm::createStringError("%s: action %zu: \"arguments\" holds a non-string", path.str().c_str(),
                                         linkIndex + 1);
        args.push_back(a.get<std::string>());
      }
    }
  } else {
    log::warning(path + ": no CppLink action; nothing to extract");
  }
  return loadLinkerArguments(args, objBaseDir, path.str() + " action " + std::to_string(linkIndex + 1));
}

} // namespace mlgo
