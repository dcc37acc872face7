#include "mlgo/log/TensorSpec.h"

#include <limits>

#include "llvm/Support/JSON.h"

#include <cstring>

namespace mlgo {
namespace {
struct TypeInfo {
  ElementType Type;
  const char *Name;
  size_t Size;
};
constexpr TypeInfo Types[] = {
    {ElementType::Float, "float", 4},     {ElementType::Double, "double", 8},   {ElementType::Int8, "int8_t", 1},
    {ElementType::UInt8, "uint8_t", 1},   {ElementType::Int16, "int16_t", 2},   {ElementType::UInt16, "uint16_t", 2},
    {ElementType::Int32, "int32_t", 4},   {ElementType::UInt32, "uint32_t", 4}, {ElementType::Int64, "int64_t", 8},
    {ElementType::UInt64, "uint64_t", 8},
};

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

template <typename T> T load(llvm::StringRef bytes, size_t i) {
  T value;
  std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
  return value;
}
} // namespace

const char *elementTypeName(ElementType type) { return Types[static_cast<int>(type)].Name; }
size_t elementSize(ElementType type) { return Types[static_cast<int>(type)].Size; }
bool isFloatingPoint(ElementType type) { return type == ElementType::Float || type == ElementType::Double; }

std::optional<ElementType> parseElementType(llvm::StringRef name) {
  for (const TypeInfo &info : Types)
    if (name == info.Name)
      return info.Type;
  return std::nullopt;
}

size_t TensorSpec::elementCount() const {
  size_t n = 1;
  for (int64_t d : Shape)
    n *= static_cast<size_t>(d);
  return n;
}

llvm::Expected<uint64_t> TensorSpec::checkedByteSize() const {
  uint64_t bytes = elementSize(Type);
  for (int64_t d : Shape) {
    if (d < 0)
      return llvm::createStringError("tensor '%s': negative dimension %lld", Name.c_str(), static_cast<long long>(d));
    if (d != 0 && bytes > MaxTensorBytes / static_cast<uint64_t>(d))
      return llvm::createStringError("tensor '%s': shape %s is larger than the limit of %llu bytes", Name.c_str(),
                                     shapeText(Shape).c_str(), static_cast<unsigned long long>(MaxTensorBytes));
    bytes *= static_cast<uint64_t>(d);
  }
  return bytes; // a zero dimension makes the product 0, whatever the others
}

double TensorSpec::elementAsDouble(llvm::StringRef bytes, size_t i) const {
  switch (Type) {
  case ElementType::Float:
    return load<float>(bytes, i);
  case ElementType::Double:
    return load<double>(bytes, i);
  case ElementType::UInt64:
    return static_cast<double>(load<uint64_t>(bytes, i));
  default:
    return static_cast<double>(elementAsInt(bytes, i));
  }
}

// Truncation toward zero; NaN and values beyond int64's range give its
// minimum (x86's conversion result) instead of undefined behaviour.
static int64_t truncateToInt(double v) {
  if (!(v > -9223372036854775808.0 - 1.0 && v < 9223372036854775808.0))
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

int64_t TensorSpec::elementAsInt(llvm::StringRef bytes, size_t i) const {
  switch (Type) {
  case ElementType::Float:
    return truncateToInt(load<float>(bytes, i));
  case ElementType::Double:
    return truncateToInt(load<double>(bytes, i));
  case ElementType::Int8:
    return load<int8_t>(bytes, i);
  case ElementType::UInt8:
    return load<uint8_t>(bytes, i);
  case ElementType::Int16:
    return load<int16_t>(bytes, i);
  case ElementType::UInt16:
    return load<uint16_t>(bytes, i);
  case ElementType::Int32:
    return load<int32_t>(bytes, i);
  case ElementType::UInt32:
    return load<uint32_t>(bytes, i);
  case ElementType::Int64:
    return load<int64_t>(bytes, i);
  case ElementType::UInt64:
    return static_cast<int64_t>(load<uint64_t>(bytes, i));
  }
  return 0;
}

void TensorSpec::toJson(llvm::json::OStream &os) const {
  os.object([&] {
    std::string name = llvm::json::isUTF8(Name) ? Name : llvm::json::fixUTF8(Name);
    os.attribute("name", name);
    os.attribute("type", elementTypeName(Type));
    os.attribute("port", static_cast<int64_t>(Port));
    os.attributeArray("shape", [&] {
      for (int64_t d : Shape)
        os.value(d);
    });
  });
}

llvm::Expected<TensorSpec> TensorSpec::fromJson(const nlohmann::json &json) {
  if (!json.is_object())
    return llvm::createStringError("a tensor spec must be a JSON object");
  for (const char *key : {"name", "type", "port", "shape"})
    if (!json.contains(key))
      return llvm::createStringError("tensor spec %s has no \"%s\"", json.dump().c_str(), key);
  TensorSpec spec;
  if (!json["name"].is_string() || !json["type"].is_string() || !json["port"].is_number_integer() ||
      !json["shape"].is_array())
    return llvm::createStringError("tensor spec %s: wrong value types", json.dump().c_str());
  spec.Name = json["name"].get<std::string>();
  auto type = parseElementType(json["type"].get<std::string>());
  if (!type)
    return llvm::createStringError("tensor spec '%s': unknown type '%s'", spec.Name.c_str(),
                                   json["type"].get<std::string>().c_str());
  spec.Type = *type;
  spec.Port = json["port"].get<int>();
  spec.Shape.clear();
  for (const auto &d : json["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      return llvm::createStringError("tensor spec '%s': bad shape %s", spec.Name.c_str(), json["shape"].dump().c_str());
    spec.Shape.push_back(d.get<int64_t>());
  }
  if (auto bytes = spec.checkedByteSize(); !bytes)
    return bytes.takeError();
  return spec;
}

} // namespace mlgo
