// A distributed ThinLTO index as extract-ir reads it beside an object from
// someone else's build (the file the object's -fthinlto-index= names),
// readThinLTOIndex: confined to the build directory, then checked to be
// bitcode with a module summary (libLLVM's LTO-info reader; the summary
// itself is not read, see fuzz/regressions/bitcode).
// Contract: any bytes give the index or a refusal with one of the three
// reasons and a detail naming the file, never a crash or an exception; an
// accepted index is the file's bytes, bitcode with a summary.
#include "FuzzSupport.h"

#include "mlgo/extract/ThinLTOIndex.h"

#include "llvm/Bitcode/BitcodeReader.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("build/obj/a.o.thinlto.bc", data, size);
  mlgo::ThinLTOIndexRead read = mlgo::readThinLTOIndex(path, mlgo::fuzz::scratchDir() + "/build");
  if (!read.Buffer) {
    FUZZ_CHECK(read.Reason != nullptr, "a refusal without a reason");
    FUZZ_CHECK(std::strcmp(read.Reason, "thinlto_index_invalid") == 0,
               std::string("a file inside the build directory refused as ") + read.Reason + ": " + read.Detail);
    FUZZ_CHECK(read.Detail.find(path) != std::string::npos, "a detail that does not name the file: " + read.Detail);
    return 0;
  }
  FUZZ_CHECK(read.Reason == nullptr, "an index with a refusal reason");
  FUZZ_CHECK(read.Buffer->getBuffer() == llvm::StringRef(reinterpret_cast<const char *>(data), size),
             "the index read is not the file's bytes");
  auto info = llvm::getBitcodeLTOInfo(read.Buffer->getMemBufferRef());
  FUZZ_CHECK(info && info->HasSummary, "an index accepted without a summary");
  return 0;
}
