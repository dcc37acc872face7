// The NUL-separated `.llvmcmd` section through splitCommandLineSection and
// CmdFilter::matches (extract-ir --cmd_filter, validate-corpus, the
// harvester's compile commands). Contract: the fields join back to the
// section (one trailing NUL dropped), none holds a NUL, and the filter
// matches exactly when some field contains a match.
#include "FuzzSupport.h"

#include "mlgo/extract/CmdFilter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef section(reinterpret_cast<const char *>(data), size);
  std::vector<llvm::StringRef> fields = mlgo::splitCommandLineSection(section);
  std::string joined;
  for (size_t i = 0; i < fields.size(); ++i) {
    FUZZ_CHECK(!fields[i].contains('\0'), "a field holds a NUL");
    if (i)
      joined += '\0';
    joined += fields[i];
  }
  llvm::StringRef expected = section;
  if (expected.ends_with(llvm::StringRef("\0", 1)))
    expected = expected.drop_back();
  FUZZ_CHECK(joined == expected, "the fields do not join back to the section");

  static const mlgo::CmdFilter filter = [] {
    auto compiled = mlgo::CmdFilter::compile("^-O[0-3]$");
    FUZZ_CHECK(bool(compiled), "the filter does not compile");
    return std::move(*compiled);
  }();
  bool any = false;
  for (llvm::StringRef f : fields)
    any = any || (f.size() == 3 && f.starts_with("-O") && f[2] >= '0' && f[2] <= '3');
  FUZZ_CHECK(filter.matches(section) == any, "the filter disagrees with the fields");
  return 0;
}
