// TFRecord files through readTFRecords, and each payload through
// parseSequenceExample: what the Python package's read_tfrecord reads from
// someone else's file. Contract: a clear error, or payloads that
// appendTFRecord frames back into exactly the input bytes; a payload that
// parses, rebuilt with SequenceExampleBuilder, parses to the same lists.
#include "FuzzSupport.h"

#include "mlgo/log/SequenceExampleReader.h"
#include "mlgo/log/TFRecord.h"

#include <cstring>

namespace {

bool sameLists(const std::vector<mlgo::ParsedFeatureList> &a, const std::vector<mlgo::ParsedFeatureList> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].Key != b[i].Key || a[i].Kind != b[i].Kind || a[i].StepSizes != b[i].StepSizes ||
        a[i].Int64Values != b[i].Int64Values ||
        // Bitwise, so that NaNs compare equal to themselves.
        a[i].FloatValues.size() != b[i].FloatValues.size() ||
        (!a[i].FloatValues.empty() &&
         std::memcmp(a[i].FloatValues.data(), b[i].FloatValues.data(), a[i].FloatValues.size() * 4) != 0))
      return false;
  return true;
}

void checkSequenceExample(llvm::StringRef payload) {
  auto lists = mlgo::parseSequenceExample(payload);
  if (!lists) {
    FUZZ_ERROR_MESSAGE(lists.takeError(), "");
    return;
  }
  mlgo::SequenceExampleBuilder builder;
  for (const mlgo::ParsedFeatureList &list : *lists) {
    size_t index = builder.list(list.Key, list.Kind);
    size_t at = 0;
    for (size_t step : list.StepSizes) {
      if (list.Kind == mlgo::SequenceExampleBuilder::Kind::Int64)
        builder.appendInt64(index, llvm::ArrayRef(list.Int64Values).slice(at, step));
      else
        builder.appendFloat(index, llvm::ArrayRef(list.FloatValues).slice(at, step));
      at += step;
    }
  }
  auto again = mlgo::parseSequenceExample(builder.serialize());
  FUZZ_CHECK(static_cast<bool>(again), "a rebuilt SequenceExample does not parse");
  FUZZ_CHECK(sameLists(*lists, *again), "a rebuilt SequenceExample parses to other lists");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef file(reinterpret_cast<const char *>(data), size);
  auto records = mlgo::readTFRecords(file);
  if (!records) {
    FUZZ_ERROR_MESSAGE(records.takeError(), "");
    return 0;
  }
  std::string framed;
  for (const std::string &payload : *records) {
    mlgo::appendTFRecord(framed, payload);
    checkSequenceExample(payload);
  }
  FUZZ_CHECK(framed == file, "the records do not frame back to the input");
  return 0;
}
