// TFRecord files: length, masked CRC-32C of the length, payload, masked
// CRC-32C of the payload. What TensorFlow's TFRecordDataset reads.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlgo {

/// CRC-32C (Castagnoli): crc32c("123456789") == 0xE3069283.
uint32_t crc32c(llvm::StringRef data);
/// TFRecord's CRC mask: rotate right by 15, add 0xA282EAD8.
uint32_t maskCrc(uint32_t crc);

/// Appends one framed record to `out`.
void appendTFRecord(std::string &out, llvm::StringRef payload);

/// Splits a whole TFRecord file into payloads, checking both CRCs of every
/// record. Errors give the record index and byte offset.
llvm::Expected<std::vector<std::string>> readTFRecords(llvm::StringRef file);

} // namespace mlgo
