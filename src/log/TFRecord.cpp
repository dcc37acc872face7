#include "mlgo/log/TFRecord.h"

#include <array>
#include <cstring>

namespace mlgo {
namespace {

// Slicing-by-8 tables for the reflected Castagnoli polynomial.
struct Crc32cTables {
  std::array<std::array<uint32_t, 256>, 8> T;
  Crc32cTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
      T[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s)
        T[s][i] = (T[s - 1][i] >> 8) ^ T[0][T[s - 1][i] & 0xff];
  }
};

const Crc32cTables &tables() {
  static const Crc32cTables Tables;
  return Tables;
}

void putLE64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void putLE32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t getLE(llvm::StringRef bytes, size_t offset, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(bytes[offset + i]);
  return v;
}

} // namespace

uint32_t crc32c(llvm::StringRef data) {
  const auto &t = tables().T;
  uint32_t crc = 0xFFFFFFFFu;
  const unsigned char *p = reinterpret_cast<const unsigned char *>(data.data());
  size_t n = data.size();
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc; // little-endian hosts
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
          t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--)
    crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
  return crc ^ 0xFFFFFFFFu;
}

uint32_t maskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

void appendTFRecord(std::string &out, llvm::StringRef payload) {
  std::string length;
  putLE64(length, payload.size());
  out += length;
  putLE32(out, maskCrc(crc32c(length)));
  out += payload.str();
  putLE32(out, maskCrc(crc32c(payload)));
}

llvm::Expected<std::vector<std::string>> readTFRecords(llvm::StringRef file) {
  std::vector<std::string> records;
  size_t offset = 0;
  while (offset < file.size()) {
    size_t index = records.size();
    if (file.size() - offset < 12)
      return llvm::createStringError("record %zu at byte %zu: truncated header", index, offset);
    if (static_cast<uint32_t>(getLE(file, offset + 8, 4)) != maskCrc(crc32c(file.substr(offset, 8))))
      return llvm::createStringError("record %zu at byte %zu: bad length CRC", index, offset);
    uint64_t length = getLE(file, offset, 8);
    // Compared without adding to `length`, which may be near 2^64.
    uint64_t room = file.size() - offset - 12;
    if (room < 4 || length > room - 4)
      return llvm::createStringError("record %zu at byte %zu: truncated payload", index, offset);
    llvm::StringRef payload = file.substr(offset + 12, length);
    if (static_cast<uint32_t>(getLE(file, offset + 12 + length, 4)) != maskCrc(crc32c(payload)))
      return llvm::createStringError("record %zu at byte %zu: bad payload CRC", index, offset);
    records.push_back(payload.str());
    offset += 12 + length + 4;
  }
  return records;
}

} // namespace mlgo
