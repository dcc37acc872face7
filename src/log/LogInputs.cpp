#include "mlgo/log/LogInputs.h"

#include "mlgo/support/DirectoryWalk.h"
#include "mlgo/support/PathUtil.h"

#include <sys/stat.h>

namespace mlgo {

llvm::Expected<std::vector<std::string>> expandLogInputs(const std::vector<std::string> &paths) {
  std::vector<std::string> files;
  for (const std::string &path : paths) {
    struct stat st;
    if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      if (llvm::Error e = walkMatching(path, {".log"}, [&](const WalkEntry &entry) {
            if (!entry.IsDirectory)
              files.push_back(joinPath(path, entry.Relative));
          }))
        return e;
    } else {
      files.push_back(path);
    }
  }
  return files;
}

} // namespace mlgo
