// Write confinement of the compilers harvest-logs starts (docs/security.md):
// a Landlock ruleset that lets a process write only beneath one directory
// (and /dev/null), whatever its flags. Prepared in the parent; applied by
// the child between vfork and exec with async-signal-safe calls only.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

/// What the running kernel offers, probed once.
struct LandlockSupport {
  int Abi = 0;         // the Landlock ABI version; 0 when there is none
  std::string Problem; // why there is none ("" when Abi > 0)
};
LandlockSupport landlockSupport();

/// Test seam: pretend the kernel offers `abi` (0: no Landlock, with
/// `problem` as the reason); a negative `abi` restores the real probe.
void setLandlockAbiForTesting(int abi, std::string problem = "");

/// The write-type access rights an ABI knows (file writes, truncation,
/// making and removing entries, cross-directory renames and links).
uint64_t landlockWriteRights(int abi);

/// An open ruleset: writes allowed only beneath `directory` and to /dev/null.
class WriteConfinement {
public:
  /// A ruleset for `directory` (and `alsoWritable`, the user's own choice);
  /// an empty confinement (fd() < 0) when the kernel has no Landlock. An
  /// Error when Landlock exists but the ruleset cannot be built (e.g. a
  /// directory cannot be opened).
  static llvm::Expected<WriteConfinement> beneath(llvm::StringRef directory,
                                                  const std::vector<std::string> &alsoWritable = {});
  WriteConfinement() = default;
  WriteConfinement(WriteConfinement &&other) noexcept;
  WriteConfinement &operator=(WriteConfinement &&other) noexcept;
  ~WriteConfinement();
  int fd() const { return Fd; }

private:
  int Fd = -1;
};

/// In the child, before exec: no new privileges, then the ruleset. Only
/// async-signal-safe calls. Returns 0, or the errno of the failing call.
int applyWriteConfinement(int rulesetFd);

} // namespace mlgo
