#include "mlgo/extract/InputLoaders.h"

#include "mlgo/support/DirectoryWalk.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/BinaryFormat/Magic.h"
#include "llvm/Support/FileSystem.h"

namespace mlgo {
namespace {

bool isLinkedBinary(const std::string &path) {
  llvm::file_magic magic;
  if (llvm::identify_magic(path, magic))
    return false;
  switch (magic) {
  case llvm::file_magic::elf_executable:
  case llvm::file_magic::elf_shared_object:
  case llvm::file_magic::macho_executable:
  case llvm::file_magic::macho_dynamically_linked_shared_lib:
  case llvm::file_magic::macho_bundle:
  case llvm::file_magic::pecoff_executable: // .exe and .dll
    return true;
  default:
    return false;
  }
}

} // namespace

llvm::Expected<LoadedInput> loadLinkedBinaries(llvm::StringRef path) {
  LoadedInput loaded;
  if (!llvm::sys::fs::is_directory(path)) {
    if (!llvm::sys::fs::exists(path))
      return llvm::createStringError(std::make_error_code(std::errc::no_such_file_or_directory), "%s: %s",
                                     path.str().c_str(), "no such file or directory");
    // One binary: its modules are named after its file name.
    loaded.Candidates.push_back({baseName(path).str(), dirName(path).str(), path.str()});
    return loaded;
  }
  if (llvm::Error e = walkMatching(path, {""}, [&](const WalkEntry &entry) {
        std::string full = joinPath(path, entry.Relative);
        if (!entry.IsDirectory && isLinkedBinary(full))
          loaded.Candidates.push_back({entry.Relative, path.str(), full});
      }))
    return e;
  return loaded;
}

} // namespace mlgo
