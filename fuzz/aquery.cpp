// `bazel aquery --output=jsonproto` through loadBazelAquery (extract-ir
// --input_type=bazel_aquery). Contract: a clear error naming the file, or
// candidates from the last CppLink action's arguments.
#include "FuzzSupport.h"

#include "mlgo/extract/InputLoaders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("aquery.json", data, size);
  auto loaded = mlgo::loadBazelAquery(path, "objs");
  if (!loaded) {
    FUZZ_ERROR_MESSAGE(loaded.takeError(), "");
    return 0;
  }
  for (const mlgo::ObjectCandidate &c : loaded->Candidates) {
    FUZZ_CHECK(!c.Rel.empty() && c.Rel[0] != '-', "candidate '" + c.Rel + "' from " + c.Origin);
    FUZZ_CHECK(!llvm::StringRef(c.Rel).contains('\0'), "a candidate path with a NUL byte from " + c.Origin);
    FUZZ_CHECK(llvm::StringRef(c.Origin).starts_with(path), "origin '" + c.Origin + "'");
  }
  for (const mlgo::SkippedEntry &s : loaded->Skipped)
    FUZZ_CHECK(!s.Reason.empty() && !s.Detail.empty(), "a skipped entry without reason from " + s.Origin);
  return 0;
}
