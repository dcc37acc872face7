#include "mlgo/support/PlaceBeneath.h"

#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/MoveFile.h"
#include "mlgo/support/OutputFile.h"
#include "mlgo/support/PathUtil.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace mlgo {

llvm::Error placeBeneath(llvm::StringRef fromRoot, llvm::StringRef fromRelative, llvm::StringRef toRoot,
                         llvm::StringRef toRelative) {
  auto from = openRegularFileBeneath(fromRoot, fromRelative);
  if (!from)
    return from.takeError();
  auto to = openParentBeneath(toRoot, toRelative, /*create=*/true);
  if (!to)
    return to.takeError();
  std::string shownFrom = joinPath(fromRoot, fromRelative);
  // A hard link of the opened file (through /proc: linkat of a descriptor)
  // under a temporary name, renamed over the destination.
  std::string temporary = baseName(temporaryNameIn("", to->Name)).str();
  std::string viaProc = "/proc/self/fd/" + std::to_string(from->get());
  if (::linkat(AT_FDCWD, viaProc.c_str(), to->Dir.get(), temporary.c_str(), AT_SYMLINK_FOLLOW) == 0) {
    if (::renameat(to->Dir.get(), temporary.c_str(), to->Dir.get(), to->Name.c_str()) != 0) {
      int err = errno;
      ::unlinkat(to->Dir.get(), temporary.c_str(), 0);
      return llvm::make_error<WriteError>(to->Shown, std::error_code(err, std::generic_category()));
    }
    // Where the destination already was this file, rename(2) leaves both
    // names in place: the temporary goes.
    ::unlinkat(to->Dir.get(), temporary.c_str(), 0);
    return syncDirectoryDescriptor(to->Dir.get(), dirName(to->Shown));
  }
  // Another file system, or no /proc: a copy of what was opened.
  if (llvm::Error e = copyDescriptorInto(from->get(), shownFrom, to->Dir.get(), to->Name, to->Shown))
    return e;
  return syncDirectoryDescriptor(to->Dir.get(), dirName(to->Shown));
}

} // namespace mlgo
