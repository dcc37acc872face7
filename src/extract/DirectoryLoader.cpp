#include "mlgo/extract/InputLoaders.h"

#include "mlgo/support/DirectoryWalk.h"
#include "mlgo/support/Log.h"

namespace mlgo {

llvm::Expected<LoadedInput> loadObjectDirectory(llvm::StringRef dir) {
  log::warning("Using input_type=directory: objects are found by walking " + dir +
               "; prefer a compile_commands.json or linker params file when the build has one");
  LoadedInput loaded;
  if (llvm::Error e = walkMatching(dir, ".o", [&](const WalkEntry &entry) {
        loaded.Candidates.push_back({entry.Relative, dir.str(), (dir + "/" + entry.Relative).str()});
      }))
    return std::move(e);
  return loaded;
}

llvm::Expected<LoadedInput> loadLocalThinLTO(llvm::StringRef objBaseDir) {
  static constexpr llvm::StringRef ImportSuffix = ".3.import.bc";
  LoadedInput loaded;
  if (llvm::Error e = walkMatching(objBaseDir, ImportSuffix, [&](const WalkEntry &entry) {
        std::string rel = llvm::StringRef(entry.Relative).drop_back(ImportSuffix.size()).str();
        std::string origin = objBaseDir.empty() ? entry.Relative : (objBaseDir + "/" + entry.Relative).str();
        loaded.Candidates.push_back({std::move(rel), objBaseDir.str(), std::move(origin)});
      }))
    return std::move(e);
  return loaded;
}

} // namespace mlgo
