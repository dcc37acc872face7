// Confinement of the compilers harvest-logs starts (docs/security.md): a
// Landlock ruleset that lets a process write only beneath one directory (and
// /dev/null), whatever its flags, and, for a compile, read and execute only
// what it is given. Prepared in the parent; applied by the child between
// vfork and exec with async-signal-safe calls only.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
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
/// The read and execute rights an ABI knows (EXECUTE, READ_FILE, READ_DIR:
/// all from ABI 1).
uint64_t landlockReadExecRights(int abi);
/// What a ruleset handles (denies unless a rule allows it) at `abi`:
/// the write rights, and with `readExec` the read and execute rights too.
uint64_t landlockHandledRights(int abi, bool readExec);

/// What a compile may read and execute besides its writable directories
/// (which it may also read). A directory's right holds beneath it; a file's
/// for that file alone. Paths that do not exist are left out.
struct ReadExecRules {
  std::vector<std::string> Readable;
  std::vector<std::string> Executable; // also readable
};

/// An open ruleset: writes allowed only beneath `directory` and to /dev/null.
class LandlockRuleset {
public:
  /// A ruleset for `directory` (and `alsoWritable`, the user's own choice);
  /// with `readExec`, reading and executing are confined to those rules,
  /// the writable directories and /dev/null too. An empty ruleset (fd() < 0)
  /// when the kernel has no Landlock. An Error when Landlock exists but the
  /// ruleset cannot be built (e.g. a writable directory cannot be opened).
  static llvm::Expected<LandlockRuleset> beneath(llvm::StringRef directory,
                                                 const std::vector<std::string> &alsoWritable = {},
                                                 const std::optional<ReadExecRules> &readExec = std::nullopt);
  LandlockRuleset() = default;
  LandlockRuleset(LandlockRuleset &&other) noexcept;
  LandlockRuleset &operator=(LandlockRuleset &&other) noexcept;
  ~LandlockRuleset();
  int fd() const { return Fd; }

private:
  int Fd = -1;
};

/// In the child, before exec: no new privileges, then the ruleset. Only
/// async-signal-safe calls. Returns 0, or the errno of the failing call.
int applyLandlockRuleset(int rulesetFd);

} // namespace mlgo
