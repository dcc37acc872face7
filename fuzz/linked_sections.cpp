// The merged .llvmbc and .llvmcmd sections of a linked binary (or `ld -r`
// output) as extract-ir splits them into one module per linked object:
// splitBitcodeSection, splitCommandLines and mainFileName. The input is the
// bitcode section, then the command-line section after a line
// "--llvmcmd--" (the object_sections target reaches these only through a
// container LLVM Object accepts).
// Contract: any bytes give pieces or a clear error, never a crash or an
// exception; the bitcode pieces lie in order inside the section, each
// starting with a bitcode magic, with only zero bytes between and around
// them; the command lines tile the section after its leading NULs, each
// starting with the field -cc1; a main file name is a non-empty field of
// its line, after -main-file-name.
#include "FuzzSupport.h"

#include "mlgo/extract/LinkedSections.h"

#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlgo::fuzz::scratchDir(); // quiet logging
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  size_t cut = input.find("\n--llvmcmd--\n");
  llvm::StringRef bitcode = input.substr(0, cut);
  llvm::StringRef cmd = cut == llvm::StringRef::npos ? llvm::StringRef() : input.substr(cut + 13);

  auto files = mlgo::splitBitcodeSection(bitcode);
  if (!files) {
    std::string message = FUZZ_ERROR_MESSAGE(files.takeError(), "");
    FUZZ_CHECK(message.find("at byte") != std::string::npos, "an error without its byte offset: " + message);
  } else {
    const char *at = bitcode.begin();
    for (llvm::StringRef file : *files) {
      FUZZ_CHECK(file.begin() >= at && file.end() <= bitcode.end() && !file.empty(), "a piece outside the section");
      for (const char *p = at; p < file.begin(); ++p)
        FUZZ_CHECK(*p == '\0', "non-zero bytes skipped between pieces");
      FUZZ_CHECK(file.starts_with(llvm::StringRef("BC\xC0\xDE", 4)) ||
                     file.starts_with(llvm::StringRef("\xDE\xC0\x17\x0B", 4)),
                 "a piece without a bitcode magic");
      at = file.end();
    }
    for (const char *p = at; p < bitcode.end(); ++p)
      FUZZ_CHECK(*p == '\0', "non-zero bytes after the last piece");
  }

  auto lines = mlgo::splitCommandLines(cmd);
  if (!lines) {
    FUZZ_ERROR_MESSAGE(lines.takeError(), "");
    return 0;
  }
  llvm::StringRef rest = cmd.ltrim('\0');
  if (lines->empty())
    FUZZ_CHECK(rest.empty(), "command lines lost");
  const char *at = rest.begin();
  for (llvm::StringRef line : *lines) {
    FUZZ_CHECK(line.begin() == at && line.end() <= cmd.end(), "command lines that do not tile the section");
    FUZZ_CHECK(line == "-cc1" || line.starts_with(llvm::StringRef("-cc1\0", 5)), "a line not starting with -cc1");
    at = line.end();
    if (std::optional<llvm::StringRef> name = mlgo::mainFileName(line)) {
      FUZZ_CHECK(!name->empty() && name->begin() >= line.begin() && name->end() <= line.end(),
                 "a main file name outside its line");
      FUZZ_CHECK(llvm::StringRef(line.begin(), name->begin() - line.begin())
                     .ends_with(llvm::StringRef("-main-file-name\0", 16)),
                 "a main file name not after -main-file-name");
    }
  }
  if (!lines->empty())
    FUZZ_CHECK(at == cmd.end(), "the last command line does not reach the end of the section");
  return 0;
}
