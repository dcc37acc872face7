#include "mlgo/extract/InputLoaders.h"

#include "mlgo/support/DirectoryWalk.h"
#include "mlgo/support/Log.h"

namespace mlgo {

llvm::Expected<LoadedInput> loadObjectDirectory(llvm::StringRef dir) {
  log::warning("Using input_type=directory: objects are found by walking " + dir +
               "; prefer a compile_commands.json or linker params file when the build has one");
  LoadedInput loaded;
  // Static archives too: each member with embedded bitcode becomes a module.
  if (llvm::Error e = walkMatching(dir, {".o", ".a"}, [&](const WalkEntry &entry) {
        loaded.Candidates.push_back({entry.Relative, dir.str(), (dir + "/" + entry.Relative).str()});
      }))
    return e;
  return loaded;
}

llvm::Expected<LoadedInput> loadLocalThinLTO(llvm::StringRef objBaseDir) {
  static constexpr llvm::StringRef ImportSuffix = ".3.import.bc";
  LoadedInput loaded;
  if (llvm::Error e = walkMatching(objBaseDir, {ImportSuffix}, [&](const WalkEntry &entry) {
        std::string rel = llvm::StringRef(entry.Relative).drop_back(ImportSuffix.size()).str();
        std::string origin = objBaseDir.empty() ? entry.Relative : (objBaseDir + "/" + entry.Relative).str();
        loaded.Candidates.push_back({std::move(rel), objBaseDir.str(), std::move(origin)});
      }))
    return e;
  return loaded;
}

llvm::Expected<LoadedInput> loadBitcodeDirectory(llvm::StringRef dir) {
  static constexpr llvm::StringRef IndexSuffix = ".thinlto.bc";
  LoadedInput loaded;
  if (llvm::Error e = walkMatching(dir, {".bc"}, [&](const WalkEntry &entry) {
        std::string origin = (dir + "/" + entry.Relative).str();
        llvm::StringRef rel = entry.Relative;
        if (rel.ends_with(IndexSuffix)) {
          log::info(origin + ": a ThinLTO summary index, not a module; skipped");
          loaded.Skipped.push_back({origin, "thinlto_index_file", "a ThinLTO summary index, not a module"});
          return;
        }
        if (entry.IsDirectory) {
          loaded.Skipped.push_back({origin, "not_a_file", "a directory named *.bc"});
          return;
        }
        loaded.Candidates.push_back({rel.str(), dir.str(), origin, rel.drop_back(3).str()});
      }))
    return e;
  return loaded;
}

} // namespace mlgo
