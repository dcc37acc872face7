#include "mlgo/corpus/ModuleNaming.h"

#include "mlgo/support/PathUtil.h"

namespace mlgo {

llvm::Expected<std::string> moduleNameForObject(llvm::StringRef rel, llvm::StringRef base) {
  std::string name;
  if (rel.starts_with("/")) {
    std::string absolute = normalizePath(rel);
    std::string absoluteBase = base.empty() ? absolutePath(".") : absolutePath(base);
    if (absoluteBase != "/" && isWithin(absolute, absoluteBase) && absolute != absoluteBase)
      name = absolute.substr(absoluteBase.size() + 1);
    else
      name = "_abs" + absolute;
  } else {
    name = normalizePath(rel);
    llvm::StringRef rest = name;
    std::string prefix;
    while (rest == ".." || rest.starts_with("../")) {
      prefix += "_up/";
      rest = rest.drop_front(std::min<size_t>(3, rest.size()));
    }
    if (!prefix.empty())
      name = prefix + rest.str();
  }
  llvm::StringRef leaf = baseName(name);
  if (name.empty() || name == "." || name == "_abs/" || leaf.empty() || leaf == "_up" || name.ends_with("/"))
    return llvm::createStringError("object path '%s' does not name a file", rel.str().c_str());
  return name;
}

} // namespace mlgo
