#include "mlgo/corpus/CommandLineSection.h"

#include "llvm/ADT/SmallVector.h"

namespace mlgo {

std::vector<llvm::StringRef> splitCommandLineSection(llvm::StringRef section) {
  std::vector<llvm::StringRef> fields;
  if (section.ends_with(llvm::StringRef("\0", 1)))
    section = section.drop_back();
  if (section.empty())
    return fields;
  llvm::SmallVector<llvm::StringRef, 64> parts;
  section.split(parts, '\0', -1, /*KeepEmpty=*/true);
  fields.assign(parts.begin(), parts.end());
  return fields;
}

} // namespace mlgo
