// compile_commands.json through loadCompileCommands (extract-ir
// --input_type=json). Contract: a clear error naming the file, or candidates
// and skipped entries that each say where they came from and why.
#include "FuzzSupport.h"

#include "mlgo/extract/InputLoaders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("compile_commands.json", data, size);
  auto loaded = mlgo::loadCompileCommands(path);
  if (!loaded) {
    FUZZ_ERROR_MESSAGE(loaded.takeError(), path);
    return 0;
  }
  for (const mlgo::ObjectCandidate &c : loaded->Candidates) {
    FUZZ_CHECK(!c.Rel.empty(), "a candidate with an empty object path from " + c.Origin);
    FUZZ_CHECK(!llvm::StringRef(c.Rel).contains('\0') && !llvm::StringRef(c.Base).contains('\0'),
               "a candidate path with a NUL byte (open() would read another file) from " + c.Origin);
    FUZZ_CHECK(llvm::StringRef(c.Origin).starts_with(path + " entry "), "origin '" + c.Origin + "'");
  }
  for (const mlgo::SkippedEntry &s : loaded->Skipped) {
    FUZZ_CHECK(!s.Reason.empty() && !s.Detail.empty(), "a skipped entry without reason from " + s.Origin);
    FUZZ_CHECK(llvm::StringRef(s.Origin).starts_with(path + " entry "), "origin '" + s.Origin + "'");
  }
  return 0;
}
