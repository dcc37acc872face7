#include "mlgo/extract/OutputOption.h"

#include "llvm/ADT/StringRef.h"

namespace mlgo {

llvm::Expected<std::optional<OutputOption>> findOutputOption(llvm::ArrayRef<std::string> args) {
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    if (arg == "-o" || arg == "--output") {
      if (i + 1 >= args.size())
        return llvm::createStringError("missing value for %s", arg.str().c_str());
      return OutputOption{args[i + 1], i, 2};
    }
    if (arg.starts_with("--output="))
      return OutputOption{arg.drop_front(9).str(), i, 1};
    // `-objcmt-*` and `-object*` are clang flags, not `-o bj...`.
    if (arg.starts_with("-o") && !arg.starts_with("-obj"))
      return OutputOption{arg.drop_front(2).str(), i, 1};
  }
  return std::nullopt;
}

} // namespace mlgo
