// TFRecord files through readTFRecords (training-log reads back what
// to-tfrecord and the harvester write). Contract: a clear error, or payloads
// that appendTFRecord frames back into exactly the input bytes.
#include "FuzzSupport.h"

#include "mlgo/log/TFRecord.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef file(reinterpret_cast<const char *>(data), size);
  auto records = mlgo::readTFRecords(file);
  if (!records) {
    FUZZ_ERROR_MESSAGE(records.takeError(), "");
    return 0;
  }
  std::string framed;
  for (const std::string &payload : *records)
    mlgo::appendTFRecord(framed, payload);
  FUZZ_CHECK(framed == file, "the records do not frame back to the input");
  return 0;
}
