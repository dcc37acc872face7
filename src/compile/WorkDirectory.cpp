#include "mlgo/compile/WorkDirectory.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

namespace mlgo {

std::string workDirectoryName(llvm::StringRef module) {
  constexpr size_t MaxLength = 200, KeptPrefix = 180;
  std::string encoded;
  encoded.reserve(module.size());
  for (char c : module) {
    if (c == '%')
      encoded += "%25";
    else if (c == '/')
      encoded += "%2F";
    else
      encoded += c;
  }
  if (encoded.size() <= MaxLength)
    return encoded;
  std::string shortened = encoded.substr(0, KeptPrefix);
  llvm::raw_string_ostream out(shortened);
  out << "%~" << llvm::format_hex_no_prefix(llvm::xxh3_64bits(module), 16);
  return shortened;
}

} // namespace mlgo
