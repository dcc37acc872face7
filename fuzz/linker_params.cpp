// Linker params files through loadLinkerParams (extract-ir
// --input_type=params), `@file` expansion included: the scratch directory
// also holds `inner.params`, and relative `@` names resolve there.
// Contract: a clear error naming the file, or candidates whose origin is a
// `file:line` and whose path is an operand, never an option.
#include "FuzzSupport.h"

#include "mlgo/extract/InputLoaders.h"

#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const bool ready = [] {
    const std::string inner = "inner.o\n-o\nlinked\n\"spaced name.o\"\n";
    mlgo::fuzz::writeScratch("inner.params", reinterpret_cast<const uint8_t *>(inner.data()), inner.size());
    return ::chdir(mlgo::fuzz::scratchDir().c_str()) == 0;
  }();
  FUZZ_CHECK(ready, "cannot enter the scratch directory");
  std::string path = mlgo::fuzz::writeScratch("link.params", data, size);
  auto loaded = mlgo::loadLinkerParams(path, "objs");
  if (!loaded) {
    FUZZ_ERROR_MESSAGE(loaded.takeError(), path);
    return 0;
  }
  for (const mlgo::ObjectCandidate &c : loaded->Candidates) {
    FUZZ_CHECK(!c.Rel.empty() && c.Rel[0] != '-', "candidate '" + c.Rel + "' from " + c.Origin);
    FUZZ_CHECK(!llvm::StringRef(c.Rel).contains('\0'), "a candidate path with a NUL byte from " + c.Origin);
    FUZZ_CHECK(c.Base == "objs", "base '" + c.Base + "'");
    FUZZ_CHECK(c.Origin.find(".params:") != std::string::npos, "origin '" + c.Origin + "'");
  }
  for (const mlgo::SkippedEntry &s : loaded->Skipped)
    FUZZ_CHECK(!s.Reason.empty() && !s.Detail.empty(), "a skipped entry without reason from " + s.Origin);
  return 0;
}
