// Reading a log below a harvest we were given, through no symbolic link:
// apart from TrainingLog.cpp, which the compiler plugins link alone.
#include "mlgo/log/TrainingLog.h"

#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/PathUtil.h"

namespace mlgo {

llvm::Error visitLogBeneath(llvm::StringRef root, llvm::StringRef relative,
                            const std::function<llvm::Error(TrainingLogReader &, TrainingLogReader::Event)> &visit) {
  auto fd = openRegularFileBeneath(root, relative);
  if (!fd)
    return fd.takeError(); // it names the path
  return visitLogEvents(std::make_unique<TrainingLogReader>(fd->release(), joinPath(root, relative), /*owned=*/true),
                        visit);
}

} // namespace mlgo
