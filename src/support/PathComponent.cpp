#include "mlgo/support/PathComponent.h"

#include "llvm/ADT/Twine.h"

namespace mlgo {

llvm::Error checkPathComponent(llvm::StringRef name, llvm::StringRef what, size_t suffixLength) {
  auto refuse = [&](const char *why) {
    return llvm::createStringError("%s '%s' cannot be used as a file name: %s", what.str().c_str(), name.str().c_str(),
                                   why);
  };
  if (name.empty())
    return refuse("it is empty");
  if (name == "." || name == "..")
    return refuse("it names a directory");
  if (name.contains('/'))
    return refuse("it contains '/'");
  if (name.contains('\0'))
    return refuse("it contains a NUL byte");
  constexpr size_t NameMax = 255;
  if (name.size() + suffixLength > NameMax)
    return refuse("it is too long");
  return llvm::Error::success();
}

} // namespace mlgo
