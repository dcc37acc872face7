// Bitcode as our tools look into it without compiling it: make-corpus and
// extract-ir's check (checkBitcode: the module list), validate-corpus' facts
// (producer, target triple) and extract-ir's ThinLTO index check (LTO info:
// whether there is a summary; the summary itself is not read, since libLLVM
// 22's summary reader overflows the stack on some inputs, see
// fuzz/regressions/bitcode). These run in the tools' own process, on files
// from someone else's build, through libLLVM's bitcode reader.
// Contract: any bytes give an answer or an error with a message, never a
// crash or an exception; bitcode checkBitcode refuses is not looked into
// further (as the tools do).
#include "FuzzSupport.h"

#include "mlgo/corpus/BitcodeCheck.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Support/MemoryBufferRef.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlgo::fuzz::scratchDir(); // quiet logging
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  if (llvm::Error e = mlgo::checkBitcode(bytes)) {
    FUZZ_ERROR_MESSAGE(std::move(e), "");
    return 0;
  }
  llvm::MemoryBufferRef ref(bytes, "fuzz.bc");
  if (auto producer = llvm::getBitcodeProducerString(ref); !producer)
    FUZZ_ERROR_MESSAGE(producer.takeError(), "");
  if (auto triple = llvm::getBitcodeTargetTriple(ref); !triple)
    FUZZ_ERROR_MESSAGE(triple.takeError(), "");
  if (auto info = llvm::getBitcodeLTOInfo(ref); !info)
    FUZZ_ERROR_MESSAGE(info.takeError(), "");
  return 0;
}
