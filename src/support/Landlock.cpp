#include "mlgo/support/Landlock.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace mlgo {
namespace {

// The kernel's ABI (include/uapi/linux/landlock.h), defined here because
// Debian 12's linux-libc-dev stops at ABI 2.
constexpr long SysCreateRuleset = 444, SysAddRule = 445, SysRestrictSelf = 446; // x86_64 and the generic table
constexpr uint32_t CreateRulesetVersion = 1u << 0;
constexpr int RulePathBeneath = 1;
constexpr uint64_t FsExecute = 1ull << 0, FsReadFile = 1ull << 2, FsReadDir = 1ull << 3;
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

uint64_t landlockReadExecRights(int abi) { return abi < 1 ? 0 : FsExecute | FsReadFile | FsReadDir; }

uint64_t landlockHandledRights(int abi, bool readExec) {
  return landlockWriteRights(abi) | (readExec ? landlockReadExecRights(abi) : 0);
}

llvm::Expected<LandlockRuleset> LandlockRuleset::beneath(llvm::StringRef directory,
                                                         const std::vector<std::string> &alsoWritable,
                                                         const std::optional<ReadExecRules> &readExec) {
  LandlockSupport support = landlockSupport();
  LandlockRuleset ruleset;
  if (support.Abi < 1)
    return ruleset;
  uint64_t handled = landlockHandledRights(support.Abi, readExec.has_value());
  RulesetAttr attr{handled};
  long fd = ::syscall(SysCreateRuleset, &attr, sizeof(attr), 0);
  if (fd < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "landlock_create_ruleset: %s",
                                   std::strerror(errno));
  ruleset.Fd = static_cast<int>(fd);
  // A file takes only the rights that apply to files (the kernel refuses a
  // directory right on it). `mustExist`: a missing path is an error rather
  // than a rule left out.
  auto allow = [&](const std::string &path, uint64_t rights, bool mustExist) -> llvm::Error {
    if ((rights & handled) == 0) // the kernel refuses a rule without a right
      return llvm::Error::success();
    int parent = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (parent < 0) {
      if (!mustExist && (errno == ENOENT || errno == ENOTDIR))
        return llvm::Error::success();
      return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                     "cannot confine a compile to %s: %s", path.c_str(), std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(parent, &st) == 0 && !S_ISDIR(st.st_mode))
      rights &= FsExecute | FsWriteFile | FsReadFile | FsTruncate;
    PathBeneathAttr rule{rights & handled, parent};
    long added = ::syscall(SysAddRule, ruleset.Fd, RulePathBeneath, &rule, 0);
    int err = errno;
    ::close(parent);
    if (added != 0)
      return llvm::createStringError(std::error_code(err, std::generic_category()), "landlock_add_rule for %s: %s",
                                     path.c_str(), std::strerror(err));
    return llvm::Error::success();
  };
  const uint64_t read = FsReadFile | FsReadDir, writeAndRead = landlockWriteRights(support.Abi) | read;
  if (llvm::Error e = allow(directory.str(), writeAndRead, true))
    return e;
  for (const std::string &extra : alsoWritable)
    if (llvm::Error e = allow(extra, writeAndRead, true))
      return e;
  if (llvm::Error e = allow("/dev/null", FsWriteFile | FsTruncate | FsReadFile, true))
    return e;
  if (readExec) {
    for (const std::string &path : readExec->Readable)
      if (llvm::Error e = allow(path, read, false))
        return e;
    for (const std::string &path : readExec->Executable)
      if (llvm::Error e = allow(path, read | FsExecute, false))
        return e;
  }
  return ruleset;
}

LandlockRuleset::LandlockRuleset(LandlockRuleset &&other) noexcept { std::swap(Fd, other.Fd); }

LandlockRuleset &LandlockRuleset::operator=(LandlockRuleset &&other) noexcept {
  std::swap(Fd, other.Fd);
  return *this;
}

LandlockRuleset::~LandlockRuleset() {
  if (Fd >= 0)
    ::close(Fd);
}

int applyLandlockRuleset(int rulesetFd) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return errno;
  if (::syscall(SysRestrictSelf, rulesetFd, 0) != 0)
    return errno;
  return 0;
}

} // namespace mlgo
