#include "LinkedImage.h"

#include "TestSupport.h"

#include <algorithm>

namespace mlgo::test {

std::string allocatedImage(const std::string &binary) {
  std::string image = binary + ".image";
  mustRun("llvm-objcopy-22 -O binary --remove-section=.note.gnu.build-id " + quote(binary) + " " + quote(image));
  return readFile(image);
}

::testing::AssertionResult sameImage(const std::string &a, const std::string &b) {
  std::string x = allocatedImage(a), y = allocatedImage(b);
  if (x == y)
    return ::testing::AssertionSuccess();
  size_t at = std::mismatch(x.begin(), x.begin() + std::min(x.size(), y.size()), y.begin()).first - x.begin();
  return ::testing::AssertionFailure() << a << " (" << x.size() << " bytes mapped) and " << b << " (" << y.size()
                                       << ") differ from image offset " << at;
}

} // namespace mlgo::test
