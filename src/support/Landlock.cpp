#include "mlgo/support/Landlock.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace mlgo {
namespace {

// The kernel's ABI (include/uapi/linux/landlock.h), defined here because
// Debian 12's linux-libc-dev stops at ABI 2.
constexpr long SysCreateRuleset = 444, SysAddRule = 445, SysRestrictSelf = 446; // x86_64 and the generic table
constexpr uint32_t CreateRulesetVersion = 1u << 0;
constexpr int RulePathBeneath = 1;
constexpr uint64_t FsWriteFile = 1ull << 1, FsRemoveDir = 1ull << 4, FsRemoveFile = 1ull << 5, FsMakeChar = 1ull << 6,
                   FsMakeDir = 1ull << 7, FsMakeReg = 1ull << 8, FsMakeSock = 1ull << 9, FsMakeFifo = 1ull << 10,
                   FsMakeBlock = 1ull << 11, FsMakeSym = 1ull << 12,
                   FsRefer = 1ull << 13, // ABI 2
    FsTruncate = 1ull << 14;             // ABI 3

struct RulesetAttr {
  uint64_t HandledAccessFs;
};
struct __attribute__((packed)) PathBeneathAttr {
  uint64_t AllowedAccess;
  int32_t ParentFd;
};

std::mutex SupportMutex;
bool Probed = false, Overridden = false;
LandlockSupport Cached, Override;

LandlockSupport probe() {
  LandlockSupport support;
  long abi = ::syscall(SysCreateRuleset, nullptr, 0, CreateRulesetVersion);
  if (abi > 0) {
    support.Abi = static_cast<int>(abi);
    return support;
  }
  int err = errno;
  support.Problem = err == ENOSYS       ? "the kernel has no Landlock (ENOSYS)"
                    : err == EOPNOTSUPP ? "Landlock is disabled in this kernel (EOPNOTSUPP: not in lsm=)"
                                        : std::string("Landlock is unavailable: ") + std::strerror(err);
  return support;
}

} // namespace

LandlockSupport landlockSupport() {
  std::lock_guard<std::mutex> lock(SupportMutex);
  if (Overridden)
    return Override;
  if (!Probed) {
    Cached = probe();
    Probed = true;
  }
  return Cached;
}

void setLandlockAbiForTesting(int abi, std::string problem) {
  std::lock_guard<std::mutex> lock(SupportMutex);
  Overridden = abi >= 0;
  Override = {abi < 0 ? 0 : abi, abi > 0 ? "" : std::move(problem)};
}

uint64_t landlockWriteRights(int abi) {
  if (abi < 1)
    return 0;
  uint64_t rights = FsWriteFile | FsRemoveDir | FsRemoveFile | FsMakeChar | FsMakeDir | FsMakeReg | FsMakeSock |
                    FsMakeFifo | FsMakeBlock | FsMakeSym;
  if (abi >= 2)
    rights |= FsRefer;
  if (abi >= 3)
    rights |= FsTruncate;
  return rights;
}

llvm::Expected<WriteConfinement> WriteConfinement::beneath(llvm::StringRef directory,
                                                           const std::vector<std::string> &alsoWritable) {
  LandlockSupport support = landlockSupport();
  WriteConfinement confinement;
  if (support.Abi < 1)
    return confinement;
  uint64_t handled = landlockWriteRights(support.Abi);
  RulesetAttr attr{handled};
  long fd = ::syscall(SysCreateRuleset, &attr, sizeof(attr), 0);
  if (fd < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "landlock_create_ruleset: %s",
                                   std::strerror(errno));
  confinement.Fd = static_cast<int>(fd);
  auto allow = [&](const std::string &path, uint64_t rights) -> llvm::Error {
    int parent = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (parent < 0)
      return llvm::createStringError(std::error_code(errno, std::generic_category()), "cannot confine writes to %s: %s",
                                     path.c_str(), std::strerror(errno));
    PathBeneathAttr rule{rights & handled, parent};
    long added = ::syscall(SysAddRule, confinement.Fd, RulePathBeneath, &rule, 0);
    int err = errno;
    ::close(parent);
    if (added != 0)
      return llvm::createStringError(std::error_code(err, std::generic_category()), "landlock_add_rule for %s: %s",
                                     path.c_str(), std::strerror(err));
    return llvm::Error::success();
  };
  if (llvm::Error e = allow(directory.str(), handled))
    return e;
  for (const std::string &extra : alsoWritable)
    if (llvm::Error e = allow(extra, handled))
      return e;
  // A regular or device file takes only file rights.
  if (llvm::Error e = allow("/dev/null", FsWriteFile | FsTruncate))
    return e;
  return confinement;
}

WriteConfinement::WriteConfinement(WriteConfinement &&other) noexcept { std::swap(Fd, other.Fd); }

WriteConfinement &WriteConfinement::operator=(WriteConfinement &&other) noexcept {
  std::swap(Fd, other.Fd);
  return *this;
}

WriteConfinement::~WriteConfinement() {
  if (Fd >= 0)
    ::close(Fd);
}

int applyWriteConfinement(int rulesetFd) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return errno;
  if (::syscall(SysRestrictSelf, rulesetFd, 0) != 0)
    return errno;
  return 0;
}

} // namespace mlgo
