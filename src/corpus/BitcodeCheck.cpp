#include "mlgo/corpus/BitcodeCheck.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Support/MemoryBufferRef.h"

namespace mlgo {

bool hasBitcodeMagic(llvm::StringRef bytes) {
  return bytes.starts_with("BC\xC0\xDE") || bytes.starts_with("\xDE\xC0\x17\x0B");
}

llvm::Error checkBitcode(llvm::StringRef bytes) {
  if (bytes.empty())
    return llvm::createStringError("empty: 0 bytes of bitcode");
  if (!hasBitcodeMagic(bytes))
    return llvm::createStringError("not bitcode: no BC C0 DE or wrapper magic");
  auto modules = llvm::getBitcodeModuleList(llvm::MemoryBufferRef(bytes, "<embedded bitcode>"));
  if (!modules)
    return llvm::createStringError("invalid bitcode: %s", llvm::toString(modules.takeError()).c_str());
  if (modules->empty())
    return llvm::createStringError("invalid bitcode: it holds no module");
  return llvm::Error::success();
}

} // namespace mlgo
