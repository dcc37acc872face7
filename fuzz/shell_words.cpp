// The `command` strings of compile_commands.json through splitShellWords.
// Contract: a clear error, or words that, quoted back with single quotes and
// joined with spaces, split to the same words.
#include "FuzzSupport.h"

#include "mlgo/support/ShellWords.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef command(reinterpret_cast<const char *>(data), size);
  auto words = mlgo::splitShellWords(command);
  if (!words) {
    FUZZ_ERROR_MESSAGE(words.takeError(), "");
    return 0;
  }
  std::string quoted;
  for (const std::string &w : *words) {
    quoted += quoted.empty() ? "'" : " '";
    for (char c : w)
      quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += '\'';
  }
  auto again = mlgo::splitShellWords(quoted);
  if (!again)
    FUZZ_CHECK(false, "quoted words do not split: " + llvm::toString(again.takeError()));
  FUZZ_CHECK(*again == *words, "words differ after quoting: " + quoted);
  return 0;
}
