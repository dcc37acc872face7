// corpus_description.json through readCorpusDescription (every tool that
// reads a corpus). Contract: a clear error naming the file, or a description
// that round-trips: written by writeCorpusDescription and read back, it is
// equal, and its bytes are a fixed point of read-then-serialize.
#include "FuzzSupport.h"

#include "mlgo/corpus/CorpusDescription.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string dir = mlgo::fuzz::scratchDir() + "/in";
  std::string path = mlgo::fuzz::writeScratch("in/corpus_description.json", data, size);
  auto description = mlgo::readCorpusDescription(dir);
  if (!description) {
    FUZZ_ERROR_MESSAGE(description.takeError(), path);
    return 0;
  }
  std::string again = mlgo::fuzz::scratchDir() + "/again";
  std::filesystem::create_directories(again);
  if (llvm::Error e = mlgo::writeCorpusDescription(again, *description))
    FUZZ_CHECK(false, "cannot write the description back: " + llvm::toString(std::move(e)));
  auto reread = mlgo::readCorpusDescription(again);
  if (!reread)
    FUZZ_CHECK(false, "our own description does not read back: " + llvm::toString(reread.takeError()));
  FUZZ_CHECK(reread->Modules == description->Modules, "modules differ after a round trip");
  FUZZ_CHECK(reread->Fields == description->Fields,
             "fields differ after a round trip: " + description->Fields.dump() + " vs " + reread->Fields.dump());
  FUZZ_CHECK(reread->serialize() == description->serialize(), "serialize is not a fixed point");
  return 0;
}
