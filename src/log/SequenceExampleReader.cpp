#include "mlgo/log/SequenceExampleReader.h"

#include <cstring>
#include <optional>
#include <set>

namespace mlgo {
namespace {

enum WireType : unsigned { Varint = 0, Fixed64 = 1, LengthDelimited = 2, Fixed32 = 5 };

// A cursor over one message's bytes; `Base` is where they start in the
// payload, so errors give payload offsets.
class WireReader {
public:
  WireReader(llvm::StringRef data, size_t base) : Data(data), Base(base) {}

  bool atEnd() const { return Pos == Data.size(); }
  size_t offset() const { return Base + Pos; }

  llvm::Expected<uint64_t> varint() {
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (Pos == Data.size())
        return fail("truncated varint");
      uint8_t byte = static_cast<uint8_t>(Data[Pos++]);
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return value;
    }
    return fail("varint longer than 10 bytes");
  }

  /// A field's tag: its number and wire type.
  llvm::Expected<std::pair<uint64_t, unsigned>> tag() {
    auto tag = varint();
    if (!tag)
      return tag.takeError();
    return std::make_pair(*tag >> 3, static_cast<unsigned>(*tag & 7));
  }

  /// A length-delimited field's bytes, as a reader of their own.
  llvm::Expected<WireReader> message() {
    auto length = varint();
    if (!length)
      return length.takeError();
    if (*length > Data.size() - Pos)
      return fail("a length of " + std::to_string(*length) + " bytes runs past the end of its message");
    WireReader inner(Data.substr(Pos, *length), Base + Pos);
    Pos += *length;
    return inner;
  }

  llvm::Expected<uint32_t> fixed32() {
    if (Data.size() - Pos < 4)
      return fail("truncated fixed32");
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i)
      value |= uint32_t(static_cast<uint8_t>(Data[Pos + i])) << (8 * i);
    Pos += 4;
    return value;
  }

  llvm::Error skip(unsigned wire) {
    switch (wire) {
    case Varint:
      return varint().takeError();
    case Fixed64:
      if (Data.size() - Pos < 8)
        return fail("truncated fixed64");
      Pos += 8;
      return llvm::Error::success();
    case LengthDelimited:
      return message().takeError();
    case Fixed32:
      return fixed32().takeError();
    default:
      return fail("unsupported wire type " + std::to_string(wire));
    }
  }

  llvm::Error fail(const std::string &message) const {
    return llvm::createStringError("at byte %zu: %s", offset(), message.c_str());
  }

  llvm::StringRef bytes() const { return Data; }

private:
  llvm::StringRef Data;
  size_t Base, Pos = 0;
};

llvm::Error withList(const std::string &key, llvm::Error error) {
  return llvm::createStringError("feature list '%s': %s", key.c_str(), llvm::toString(std::move(error)).c_str());
}

float floatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

// One Feature: a step of `list`.
llvm::Error parseFeature(WireReader feature, ParsedFeatureList &list,
                         std::optional<SequenceExampleBuilder::Kind> &kind) {
  size_t values = 0;
  auto setKind = [&](SequenceExampleBuilder::Kind k, size_t at) -> llvm::Error {
    auto name = [](SequenceExampleBuilder::Kind k) {
      return k == SequenceExampleBuilder::Kind::Float   ? "float_list"
             : k == SequenceExampleBuilder::Kind::Bytes ? "bytes_list"
                                                        : "int64_list";
    };
    if (kind && *kind != k)
      return llvm::createStringError("at byte %zu: a %s step in a list of %s", at, name(k), name(*kind));
    kind = k;
    list.Kind = k;
    return llvm::Error::success();
  };
  while (!feature.atEnd()) {
    size_t at = feature.offset();
    auto tag = feature.tag();
    if (!tag)
      return tag.takeError();
    auto [field, wire] = *tag;
    if (field == 1 && wire == LengthDelimited) {
      if (llvm::Error e = setKind(SequenceExampleBuilder::Kind::Bytes, at))
        return e;
      auto valueList = feature.message();
      if (!valueList)
        return valueList.takeError();
      while (!valueList->atEnd()) {
        auto inner = valueList->tag();
        if (!inner)
          return inner.takeError();
        auto [valueField, valueWire] = *inner;
        if (valueField != 1 || valueWire != LengthDelimited) {
          if (llvm::Error e = valueList->skip(valueWire))
            return e;
          continue;
        }
        auto bytes = valueList->message(); // bounded by what remains
        if (!bytes)
          return bytes.takeError();
        list.BytesValues.push_back(bytes->bytes().str());
        ++values;
      }
      continue;
    }
    if ((field == 2 || field == 3) && wire == LengthDelimited) {
      auto kindHere = field == 2 ? SequenceExampleBuilder::Kind::Float : SequenceExampleBuilder::Kind::Int64;
      if (llvm::Error e = setKind(kindHere, at))
        return e;
      auto valueList = feature.message();
      if (!valueList)
        return valueList.takeError();
      while (!valueList->atEnd()) {
        auto inner = valueList->tag();
        if (!inner)
          return inner.takeError();
        auto [valueField, valueWire] = *inner;
        if (valueField != 1) {
          if (llvm::Error e = valueList->skip(valueWire))
            return e;
          continue;
        }
        if (kindHere == SequenceExampleBuilder::Kind::Float) {
          if (valueWire == Fixed32) {
            auto bits = valueList->fixed32();
            if (!bits)
              return bits.takeError();
            list.FloatValues.push_back(floatFromBits(*bits));
            ++values;
          } else if (valueWire == LengthDelimited) {
            auto packed = valueList->message();
            if (!packed)
              return packed.takeError();
            if (packed->bytes().size() % 4)
              return packed->fail("packed floats of " + std::to_string(packed->bytes().size()) +
                                  " bytes, not a multiple of 4");
            while (!packed->atEnd()) {
              auto bits = packed->fixed32();
              if (!bits)
                return bits.takeError();
              list.FloatValues.push_back(floatFromBits(*bits));
              ++values;
            }
          } else {
            return valueList->fail("a float value of wire type " + std::to_string(valueWire));
          }
        } else {
          if (valueWire == Varint) {
            auto v = valueList->varint();
            if (!v)
              return v.takeError();
            list.Int64Values.push_back(static_cast<int64_t>(*v));
            ++values;
          } else if (valueWire == LengthDelimited) {
            auto packed = valueList->message();
            if (!packed)
              return packed.takeError();
            while (!packed->atEnd()) {
              auto v = packed->varint();
              if (!v)
                return v.takeError();
              list.Int64Values.push_back(static_cast<int64_t>(*v));
              ++values;
            }
          } else {
            return valueList->fail("an int64 value of wire type " + std::to_string(valueWire));
          }
        }
      }
      continue;
    }
    if (llvm::Error e = feature.skip(wire))
      return e;
  }
  list.StepSizes.push_back(values);
  return llvm::Error::success();
}

llvm::Error parseFeatureList(WireReader featureList, ParsedFeatureList &list) {
  std::optional<SequenceExampleBuilder::Kind> kind;
  while (!featureList.atEnd()) {
    auto tag = featureList.tag();
    if (!tag)
      return tag.takeError();
    auto [field, wire] = *tag;
    if (field == 1 && wire == LengthDelimited) {
      auto feature = featureList.message();
      if (!feature)
        return feature.takeError();
      if (llvm::Error e = parseFeature(*feature, list, kind))
        return e;
    } else if (llvm::Error e = featureList.skip(wire)) {
      return e;
    }
  }
  return llvm::Error::success();
}

llvm::Error parseFeatureLists(WireReader lists, std::vector<ParsedFeatureList> &out, std::set<std::string> &keys) {
  while (!lists.atEnd()) {
    auto tag = lists.tag();
    if (!tag)
      return tag.takeError();
    auto [field, wire] = *tag;
    if (field != 1 || wire != LengthDelimited) {
      if (llvm::Error e = lists.skip(wire))
        return e;
      continue;
    }
    auto entry = lists.message();
    if (!entry)
      return entry.takeError();
    // A map entry: key (1) and value (2), in either order; the value is
    // parsed once the key is known, so that errors can name it.
    std::optional<WireReader> value;
    std::string key;
    while (!entry->atEnd()) {
      auto entryTag = entry->tag();
      if (!entryTag)
        return entryTag.takeError();
      auto [entryField, entryWire] = *entryTag;
      if (entryWire == LengthDelimited && (entryField == 1 || entryField == 2)) {
        auto bytes = entry->message();
        if (!bytes)
          return bytes.takeError();
        if (entryField == 1)
          key = bytes->bytes().str();
        else
          value = *bytes;
      } else if (llvm::Error e = entry->skip(entryWire)) {
        return e;
      }
    }
    if (!keys.insert(key).second)
      return llvm::createStringError("feature list '%s' appears twice", key.c_str());
    ParsedFeatureList list;
    list.Key = key;
    if (value)
      if (llvm::Error e = parseFeatureList(*value, list))
        return withList(key, std::move(e));
    out.push_back(std::move(list));
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<ParsedFeatureList>> parseSequenceExample(llvm::StringRef payload) {
  std::vector<ParsedFeatureList> lists;
  std::set<std::string> keys;
  WireReader example(payload, 0);
  while (!example.atEnd()) {
    auto tag = example.tag();
    if (!tag)
      return tag.takeError();
    auto [field, wire] = *tag;
    if (field == 2 && wire == LengthDelimited) {
      auto featureLists = example.message();
      if (!featureLists)
        return featureLists.takeError();
      if (llvm::Error e = parseFeatureLists(*featureLists, lists, keys))
        return std::move(e);
    } else if (llvm::Error e = example.skip(wire)) {
      return std::move(e);
    }
  }
  return lists;
}

} // namespace mlgo
