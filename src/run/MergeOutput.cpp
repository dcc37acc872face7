#include "MergeOutput.h"

#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mlgo {
namespace {

llvm::Error errnoError(const char *what, const std::string &path) {
  int err = errno;
  return llvm::createStringError(std::error_code(err, std::generic_category()), "%s %s: %s", what, path.c_str(),
                                 std::strerror(err));
}

} // namespace

std::string parentOf(llvm::StringRef path) {
  llvm::StringRef parent = dirName(path);
  return parent.empty() ? "." : parent.str();
}

llvm::Error placeLog(const std::string &shardDir, const std::string &relative, const std::string &to, bool hardLink) {
  if (llvm::Error e = ensureDirectory(dirName(to)))
    return e;
  std::string from = joinPath(shardDir, relative);
  auto opened = openBeneath(shardDir, relative, O_RDONLY | O_NONBLOCK);
  if (!opened)
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "%s: refusing to merge it",
                                   llvm::toString(opened.takeError()).c_str());
  int in = opened->get();
  struct Closer {
    int &Fd;
    ~Closer() {
      if (Fd >= 0)
        ::close(Fd);
    }
  };
  struct stat st;
  if (::fstat(in, &st) != 0)
    return errnoError("cannot read", from);
  if (!S_ISREG(st.st_mode))
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                   "%s is not a regular file: refusing to merge it", from.c_str());
  if (hardLink) {
    // The file just checked, whatever happens to the name meanwhile.
    std::string self = "/proc/self/fd/" + std::to_string(in);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, to.c_str(), AT_SYMLINK_FOLLOW) == 0)
      return llvm::Error::success(); // the shard's own file, synced by its harvest; the directory is synced later
    // Without /proc: the name in its directory as opened without links, and
    // the linked file must still be the one checked.
    auto parent = openParentBeneath(shardDir, relative);
    if (!parent)
      return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "%s: refusing to merge it",
                                     llvm::toString(parent.takeError()).c_str());
    if (::linkat(parent->Dir.get(), parent->Name.c_str(), AT_FDCWD, to.c_str(), 0) != 0)
      return errnoError(("cannot link " + from + " to").c_str(), to);
    struct stat linked;
    if (::lstat(to.c_str(), &linked) != 0 || linked.st_ino != st.st_ino || linked.st_dev != st.st_dev) {
      ::unlink(to.c_str());
      return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                     "%s changed while it was merged: refusing to merge it", from.c_str());
    }
    return llvm::Error::success();
  }
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0)
    return errnoError("cannot create", to);
  Closer closeOut{out};
  std::vector<char> buffer(1 << 20);
  for (;;) {
    ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errnoError("cannot read", from);
    if (n == 0)
      break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out, buffer.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return errnoError("cannot write", to);
      done += w;
    }
  }
  return syncFileDescriptor(out, to);
}

llvm::Error replaceDirectory(const std::string &staging, const std::string &dir) {
  std::string old = dir + ".merge-old." + std::to_string(::getpid());
  bool existed = llvm::sys::fs::exists(dir);
  if (existed)
    if (std::error_code ec = llvm::sys::fs::rename(dir, old))
      return llvm::createStringError(ec, "cannot move the earlier %s aside: %s", dir.c_str(), ec.message().c_str());
  if (std::error_code ec = llvm::sys::fs::rename(staging, dir))
    return llvm::createStringError(ec, "cannot rename %s to %s: %s", staging.c_str(), dir.c_str(),
                                   ec.message().c_str());
  if (llvm::Error e = syncDirectory(parentOf(dir)))
    return e;
  if (existed)
    llvm::sys::fs::remove_directories(old);
  return llvm::Error::success();
}

llvm::Error lockOutputAndCleanStale(const std::string &outputDir) {
  if (llvm::Error e = ensureDirectory(parentOf(outputDir)))
    return e;
  std::string lockPath = outputDir + ".merge-lock";
  static int lockFd = -1; // one merge per process
  if (lockFd < 0) {
    int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
      return errnoError("cannot open the merge lock", lockPath);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK)
        return llvm::createStringError(std::make_error_code(std::errc::resource_unavailable_try_again),
                                       "another merge-harvest into %s is running (it holds %s): wait for it",
                                       outputDir.c_str(), lockPath.c_str());
      errno = err;
      return errnoError("cannot lock", lockPath);
    }
    lockFd = fd;
  }
  std::string parent = parentOf(outputDir), base = baseName(outputDir).str();
  std::error_code ec;
  std::vector<std::string> stale;
  for (llvm::sys::fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    llvm::StringRef name = baseName(it->path());
    if (name.starts_with(base + ".merge-tmp.") || name.starts_with(base + ".merge-old."))
      stale.push_back(name.str());
  }
  for (const std::string &name : stale) {
    std::string dir = joinPath(parent, name);
    log::info("removing " + dir + ", left by an earlier merge-harvest that did not finish");
    // A link so named is removed itself, never the directory it names.
    if (llvm::Error e = removeTreeBeneath(parent, name))
      return llvm::createStringError("cannot remove %s: %s", dir.c_str(), llvm::toString(std::move(e)).c_str());
  }
  return llvm::Error::success();
}

llvm::Error checkReplaceable(const std::string &outputDir, const std::vector<std::string> &shardDirs) {
  std::string out = absolutePath(outputDir);
  for (const std::string &shard : shardDirs)
    if (isWithin(absolutePath(shard), out))
      return llvm::createStringError("--output_dir %s holds the shard %s: merge into another directory",
                                     outputDir.c_str(), shard.c_str());
  std::error_code ec;
  llvm::sys::fs::directory_iterator it(out, ec);
  if (ec || it == llvm::sys::fs::directory_iterator())
    return llvm::Error::success(); // absent or empty
  auto summary = llvm::MemoryBuffer::getFile(joinPath(out, "summary.json"));
  bool earlierMerge = false;
  if (summary) {
    try {
      earlierMerge = nlohmann::ordered_json::parse((*summary)->getBuffer()).contains("merge");
    } catch (const nlohmann::json::exception &) {
    }
  }
  if (!earlierMerge)
    return llvm::createStringError("--output_dir %s exists and is not an earlier merge-harvest output (no summary.json "
                                   "with a merge section): refusing to replace it",
                                   outputDir.c_str());
  return llvm::Error::success();
}

} // namespace mlgo
