#include "mlgo/extract/LinkedSections.h"

#include "mlgo/corpus/CommandLineSection.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Bitstream/BitstreamReader.h"
#include "llvm/Support/Endian.h"

namespace mlgo {
namespace {

constexpr llvm::StringRef RawMagic("BC\xC0\xDE", 4);
constexpr llvm::StringRef WrapperMagic("\xDE\xC0\x17\x0B", 4);
constexpr size_t WrapperHeaderSize = 20; // magic, version, offset, size, cputype

llvm::Error notBitcodeAt(size_t offset, const std::string &why) {
  return llvm::createStringError("the bitcode section is not a sequence of bitcode files at byte %zu: %s", offset,
                                 why.c_str());
}

// The size of the raw bitcode file at the start of `bytes`: the magic, then
// top-level blocks, each skipped by its declared length, until the bytes
// end, the next file's magic, or padding begins.
llvm::Expected<size_t> rawFileSize(llvm::StringRef bytes, size_t sectionOffset) {
  size_t end = RawMagic.size();
  while (end < bytes.size()) {
    llvm::StringRef next = bytes.drop_front(end);
    // A top-level entry starts with ENTER_SUBBLOCK (abbreviation id 1 in the
    // low two bits), so it is never a zero byte.
    if (next.starts_with(RawMagic) || next.starts_with(WrapperMagic) || next.front() == '\0')
      break;
    llvm::BitstreamCursor cursor(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(next.data()), next.size()));
    llvm::Expected<llvm::BitstreamEntry> entry = cursor.advance(llvm::BitstreamCursor::AF_DontAutoprocessAbbrevs);
    if (!entry)
      return notBitcodeAt(sectionOffset + end, llvm::toString(entry.takeError()));
    if (entry->Kind != llvm::BitstreamEntry::SubBlock)
      return notBitcodeAt(sectionOffset + end, "a top-level entry that is not a block");
    if (llvm::Error e = cursor.SkipBlock())
      return notBitcodeAt(sectionOffset + end, llvm::toString(std::move(e)));
    size_t blockBytes = cursor.GetCurrentBitNo() / 8;
    if (blockBytes == 0 || blockBytes > next.size())
      return notBitcodeAt(sectionOffset + end, "a block that runs past the section");
    end += blockBytes;
  }
  return end;
}

} // namespace

llvm::Expected<std::vector<llvm::StringRef>> splitBitcodeSection(llvm::StringRef section) {
  std::vector<llvm::StringRef> files;
  size_t pos = 0;
  while (pos < section.size()) {
    if (section[pos] == '\0') { // padding between files
      ++pos;
      continue;
    }
    llvm::StringRef rest = section.drop_front(pos);
    size_t size;
    if (rest.starts_with(WrapperMagic)) {
      if (rest.size() < WrapperHeaderSize)
        return notBitcodeAt(pos, "a truncated bitcode wrapper header");
      uint64_t offset = llvm::support::endian::read32le(rest.data() + 8);
      uint64_t length = llvm::support::endian::read32le(rest.data() + 12);
      if (offset < WrapperHeaderSize || offset + length > rest.size())
        return notBitcodeAt(pos, "a bitcode wrapper whose payload lies outside the section");
      size = static_cast<size_t>(offset + length);
      // clang pads a wrapped file with zeros to a multiple of 16 bytes.
      while (size % 16 != 0 && size < rest.size() && rest[size] == '\0')
        ++size;
    } else if (rest.starts_with(RawMagic)) {
      llvm::Expected<size_t> rawSize = rawFileSize(rest, pos);
      if (!rawSize)
        return rawSize.takeError();
      size = *rawSize;
    } else {
      return notBitcodeAt(pos, "no bitcode magic");
    }
    files.push_back(rest.take_front(size));
    pos += size;
  }
  return files;
}

llvm::Expected<std::vector<llvm::StringRef>> splitCommandLines(llvm::StringRef section) {
  std::vector<llvm::StringRef> lines;
  size_t start = llvm::StringRef::npos;
  size_t pos = 0;
  while (pos < section.size()) {
    size_t nul = section.find('\0', pos);
    size_t end = nul == llvm::StringRef::npos ? section.size() : nul;
    llvm::StringRef field = section.slice(pos, end);
    if (field == "-cc1") {
      if (start != llvm::StringRef::npos)
        lines.push_back(section.slice(start, pos));
      start = pos;
    } else if (start == llvm::StringRef::npos && !field.empty()) {
      return llvm::createStringError("the command-line section does not start with -cc1 (byte %zu)", pos);
    }
    pos = end + 1;
  }
  if (start != llvm::StringRef::npos)
    lines.push_back(section.drop_front(start));
  return lines;
}

std::optional<llvm::StringRef> mainFileName(llvm::StringRef commandLine) {
  std::vector<llvm::StringRef> fields = splitCommandLineSection(commandLine);
  for (size_t i = 0; i + 1 < fields.size(); ++i)
    if (fields[i] == "-main-file-name" && !fields[i + 1].empty())
      return fields[i + 1];
  return std::nullopt;
}

} // namespace mlgo
