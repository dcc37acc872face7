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
  if (llvm::Error e = checkModuleName(name))
    return e;
  return name;
}

llvm::Error checkModuleName(llvm::StringRef name) {
  auto bad = [&](const char *why) { return llvm::createStringError("module name '%s' %s", name.str().c_str(), why); };
  if (name.empty())
    return bad("is empty");
  if (name.contains('\0'))
    return bad("contains a NUL byte");
  if (name.starts_with("/"))
    return bad("is absolute, so it leaves the corpus");
  if (name.ends_with("/"))
    return bad("names a directory, not a module");
  std::string normal = normalizePath(name);
  if (normal == ".")
    return bad("names the corpus directory itself, not a module");
  if (normal == ".." || llvm::StringRef(normal).starts_with("../"))
    return bad("leaves the corpus");
  return llvm::Error::success();
}

} // namespace mlgo
