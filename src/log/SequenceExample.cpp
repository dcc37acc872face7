#include "mlgo/log/SequenceExample.h"

#include <cstring>

namespace mlgo {

void appendVarint(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void appendLengthDelimited(std::string &out, unsigned field, llvm::StringRef bytes) {
  appendVarint(out, (field << 3) | 2);
  appendVarint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

size_t SequenceExampleBuilder::list(llvm::StringRef key, Kind kind) {
  for (size_t i = 0; i < Lists.size(); ++i)
    if (Lists[i].Key == key)
      return i;
  Lists.push_back({key.str(), kind, {}, 0});
  return Lists.size() - 1;
}

void SequenceExampleBuilder::appendInt64(size_t index, llvm::ArrayRef<int64_t> values) {
  std::string packed, int64List, feature;
  for (int64_t v : values)
    appendVarint(packed, static_cast<uint64_t>(v));
  if (!values.empty())                                      // an empty list is written as an empty message: 1a 00
    appendLengthDelimited(int64List, 1, packed);            // Int64List.value, packed
  appendLengthDelimited(feature, 3, int64List);             // Feature.int64_list
  appendLengthDelimited(Lists[index].Features, 1, feature); // FeatureList.feature
  ++Lists[index].Steps;
}

void SequenceExampleBuilder::appendFloat(size_t index, llvm::ArrayRef<float> values) {
  std::string packed(values.size() * 4, '\0'), floatList, feature;
  std::memcpy(packed.data(), values.data(), packed.size()); // little-endian binary32
  if (!values.empty())
    appendLengthDelimited(floatList, 1, packed); // FloatList.value, packed
  appendLengthDelimited(feature, 2, floatList);  // Feature.float_list
  appendLengthDelimited(Lists[index].Features, 1, feature);
  ++Lists[index].Steps;
}

void SequenceExampleBuilder::appendBytes(size_t index, llvm::ArrayRef<llvm::StringRef> values) {
  std::string bytesList, feature;
  for (llvm::StringRef v : values)
    appendLengthDelimited(bytesList, 1, v);     // BytesList.value, one field each
  appendLengthDelimited(feature, 1, bytesList); // Feature.bytes_list
  appendLengthDelimited(Lists[index].Features, 1, feature);
  ++Lists[index].Steps;
}

std::string SequenceExampleBuilder::serialize() const {
  std::string featureLists;
  for (const FeatureList &list : Lists) {
    std::string entry;
    appendLengthDelimited(entry, 1, list.Key);      // map entry key
    appendLengthDelimited(entry, 2, list.Features); // map entry value: FeatureList
    appendLengthDelimited(featureLists, 1, entry);  // FeatureLists.feature_list
  }
  std::string example;
  appendLengthDelimited(example, 2, featureLists); // SequenceExample.feature_lists
  return example;
}

} // namespace mlgo
