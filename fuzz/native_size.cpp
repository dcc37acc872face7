// The native size harvest-logs rewards, of the object llc wrote for a
// module of someone else's corpus, and of the binary --link made:
// berkeleyTextSize and berkeleySizes (llvm-size's Berkeley columns, through
// LLVM Object, in the harvester's own process).
// Contract: any bytes give sizes or a clear error naming the file, never a
// crash or an exception; both functions accept and refuse the same files,
// and give the same answer when asked twice.
#include "FuzzSupport.h"

#include "mlgo/evaluate/NativeSize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("m.o", data, size);
  auto text = mlgo::berkeleyTextSize(path);
  auto sizes = mlgo::berkeleySizes(path);
  if (!text || !sizes) {
    FUZZ_CHECK(!text && !sizes, "one of berkeleyTextSize and berkeleySizes accepts what the other refuses");
    FUZZ_ERROR_MESSAGE(text.takeError(), path);
    FUZZ_ERROR_MESSAGE(sizes.takeError(), path);
    return 0;
  }
  auto textAgain = mlgo::berkeleyTextSize(path);
  auto sizesAgain = mlgo::berkeleySizes(path);
  FUZZ_CHECK(textAgain && *textAgain == *text, "berkeleyTextSize differs when asked twice");
  FUZZ_CHECK(sizesAgain && sizesAgain->Text == sizes->Text && sizesAgain->Data == sizes->Data &&
                 sizesAgain->Bss == sizes->Bss,
             "berkeleySizes differs when asked twice");
  return 0;
}
