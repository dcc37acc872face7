#include "mlgo/support/AtomicFile.h"

#include "mlgo/support/PathUtil.h"
#include "mlgo/support/SyncHook.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>

namespace mlgo {
namespace {

llvm::Error errnoError(int err, const char *what, const std::string &path) {
  return llvm::createStringError(std::error_code(err, std::generic_category()), "%s %s: %s", what, path.c_str(),
                                 std::strerror(err));
}

llvm::Error writeAll(int fd, llvm::StringRef data, const std::string &path) {
  const char *cursor = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, cursor, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return errnoError(n < 0 ? errno : ENOSPC, "cannot write", path);
    cursor += n;
    left -= static_cast<size_t>(n);
  }
  return llvm::Error::success();
}

std::string procFdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

std::atomic<bool> Durable{true};
std::atomic<bool> SyncDeferred{false};
std::atomic<bool> UnnamedFilesEnabled{true};

// Gives the unnamed file `fd` the name `target`. linkat(AT_EMPTY_PATH) needs
// no /proc lookup but needs CAP_DAC_READ_SEARCH; without it (ENOENT/EPERM)
// the /proc/self/fd path is used from then on. Returns 0 or an errno.
int linkUnnamed(int fd, const std::string &target) {
  static std::atomic<bool> EmptyPathWorks{true};
  if (EmptyPathWorks.load(std::memory_order_relaxed)) {
    if (::linkat(fd, "", AT_FDCWD, target.c_str(), AT_EMPTY_PATH) == 0)
      return 0;
    if (errno != ENOENT && errno != EPERM && errno != EINVAL)
      return errno;
    EmptyPathWorks.store(false, std::memory_order_relaxed);
  }
  std::string source = procFdPath(fd);
  return ::linkat(AT_FDCWD, source.c_str(), AT_FDCWD, target.c_str(), AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
}

// O_TMPFILE needs file-system support and /proc to link the file by name.
bool unnamedFilesUsable() {
  static const bool Usable = ::access("/proc/self/fd", X_OK) == 0;
  return Usable && UnnamedFilesEnabled.load();
}

// Test seam (docs/extract-ir.md, Resume): MLGO_KILL_BEFORE_RENAME=NAME makes
// the process SIGKILL itself once writeFileAtomically has written (and
// synced) the temporary of a file whose last component is NAME, before the
// rename: exactly where a kill leaves that temporary behind. Read once.
void killIfAskedBeforeRenaming(llvm::StringRef path) {
  static const char *const Name = std::getenv("MLGO_KILL_BEFORE_RENAME");
  if (Name && *Name && baseName(path) == Name)
    ::kill(::getpid(), SIGKILL);
}

llvm::Error renameOver(const std::string &from, const std::string &to) {
  if (::rename(from.c_str(), to.c_str()) == 0)
    return llvm::Error::success();
  int err = errno;
  ::unlink(from.c_str());
  return errnoError(err, "cannot rename into", to);
}

} // namespace

void setDurableWrites(bool durable) { Durable = durable; }
void setSyncDeferred(bool deferred) { SyncDeferred = deferred; }
bool durableWrites() { return Durable; }
void setUnnamedFilesEnabled(bool enabled) { UnnamedFilesEnabled = enabled; }

llvm::Error syncFileDescriptor(int fd, llvm::StringRef path) {
  if (!Durable || SyncDeferred || issueSync(SyncCall::Fdatasync, fd, path) == 0)
    return llvm::Error::success();
  return errnoError(errno, "cannot flush to disk", path.str());
}

llvm::Error syncFile(llvm::StringRef path) {
  if (!Durable || SyncDeferred)
    return llvm::Error::success();
  std::string p = path.str();
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errnoError(errno, "cannot open", p);
  llvm::Error e = syncFileDescriptor(fd, p);
  ::close(fd);
  return e;
}

llvm::Error syncDirectory(llvm::StringRef dir) {
  if (!Durable || SyncDeferred)
    return llvm::Error::success();
  std::string d = dir.empty() ? "." : dir.str();
  int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errnoError(errno, "cannot open directory", d);
  llvm::Error e = llvm::Error::success();
  if (issueSync(SyncCall::Fsync, fd, d) != 0)
    e = errnoError(errno, "cannot flush to disk directory", d);
  ::close(fd);
  return e;
}

llvm::Error syncDirectoryDescriptor(int fd, llvm::StringRef dir) {
  if (!Durable || SyncDeferred)
    return llvm::Error::success();
  if (issueSync(SyncCall::Fsync, fd, dir) != 0)
    return errnoError(errno, "cannot flush to disk directory", dir.str());
  return llvm::Error::success();
}

std::string temporaryNameIn(llvm::StringRef dir, llvm::StringRef stem) {
  static std::atomic<unsigned long> Counter{0};
  static const std::string Pid = std::to_string(::getpid());
  return joinPath(dir, stem.str() + ".tmp." + Pid + "." + std::to_string(Counter++));
}

llvm::Error ensureDirectory(llvm::StringRef dir) {
  static std::mutex Mutex;
  static std::unordered_set<std::string> Made;
  if (dir.empty())
    return llvm::Error::success();
  std::string key = dir.str();
  {
    std::lock_guard<std::mutex> lock(Mutex);
    if (Made.count(key))
      return llvm::Error::success();
  }
  // The directories about to be made: their names must be durable too.
  std::vector<std::string> missing;
  for (llvm::StringRef d = dir; !d.empty() && !llvm::sys::fs::exists(d); d = dirName(d))
    missing.push_back(d.str());
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create directory %s: %s", key.c_str(), ec.message().c_str());
  for (const std::string &made : missing)
    if (llvm::Error e = syncDirectory(dirName(made)))
      return e;
  std::lock_guard<std::mutex> lock(Mutex);
  Made.insert(std::move(key));
  return llvm::Error::success();
}

llvm::Error writeNewFile(llvm::StringRef path, llvm::StringRef data, std::optional<unsigned> mode) {
  std::string p = path.str();
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode.value_or(0644));
  if (fd < 0)
    return errnoError(errno, "cannot create", p);
  llvm::Error e = writeAll(fd, data, p);
  if (!e && mode && ::fchmod(fd, *mode) != 0)
    e = errnoError(errno, "cannot set the mode of", p);
  if (!e)
    e = syncFileDescriptor(fd, p);
  if (::close(fd) != 0 && !e)
    e = errnoError(errno, "cannot finish", p);
  if (e)
    ::unlink(p.c_str());
  return e;
}

llvm::Error writeNewFileAt(int dir, llvm::StringRef name, llvm::StringRef shown, llvm::StringRef data) {
  std::string n = name.str(), p = shown.str();
  int fd = ::openat(dir, n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return errnoError(errno, "cannot create", p);
  llvm::Error e = writeAll(fd, data, p);
  if (!e)
    e = syncFileDescriptor(fd, p);
  if (::close(fd) != 0 && !e)
    e = errnoError(errno, "cannot finish", p);
  if (e)
    ::unlinkat(dir, n.c_str(), 0);
  return e;
}

llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef data) {
  std::string temporary = temporaryNameIn(dirName(path), baseName(path));
  if (llvm::Error e = writeNewFile(temporary, data))
    return e;
  killIfAskedBeforeRenaming(path);
  if (llvm::Error e = renameOver(temporary, path.str()))
    return e;
  return syncDirectory(dirName(path));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (Fd >= 0)
    ::close(Fd);
  if (!Temporary.empty())
    ::unlink(Temporary.c_str());
}

llvm::Error AtomicFileWriter::open(llvm::StringRef path) {
  Final = path.str();
  Temporary = temporaryNameIn(dirName(path), baseName(path));
  Fd = ::open(Temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (Fd < 0) {
    int err = errno;
    Temporary.clear();
    return errnoError(err, "cannot create a temporary file for", Final);
  }
  return llvm::Error::success();
}

llvm::Error AtomicFileWriter::write(llvm::StringRef data) {
  if (llvm::Error e = writeAll(Fd, data, Final))
    return e;
  Written += data.size();
  return llvm::Error::success();
}

llvm::Error AtomicFileWriter::commit() {
  llvm::Error e = syncFileDescriptor(Fd, Final);
  if (::close(Fd) != 0 && !e)
    e = errnoError(errno, "cannot finish", Final);
  Fd = -1;
  if (!e)
    e = renameOver(Temporary, Final); // removes the temporary on failure
  Temporary.clear();
  if (e)
    return e;
  return syncDirectory(dirName(Final));
}

// rename(2) and link(2) cannot cross file systems (EXDEV): a directory on
// another file system than the staging directory (a mount inside the output)
// stages its temporaries and backups in itself. They never end in `.bc`.
std::string StagedFiles::stagingDirFor(const std::string &dir) {
  if (!StagingDevice) {
    struct stat st;
    StagingDevice = ::stat(StagingDir.c_str(), &st) == 0 ? std::optional<dev_t>(st.st_dev) : std::nullopt;
  }
  struct stat target;
  if (StagingDevice && ::stat(dir.empty() ? "." : dir.c_str(), &target) == 0 && target.st_dev != *StagingDevice)
    return dir.empty() ? "." : dir;
  return StagingDir;
}

StagedFiles::~StagedFiles() {
  for (const Entry &e : Entries) {
    if (e.Fd >= 0)
      ::close(e.Fd);
    if (!e.Temporary.empty())
      ::unlink(e.Temporary.c_str());
  }
}

llvm::Error StagedFiles::add(llvm::StringRef finalPath, llvm::StringRef data, std::optional<unsigned> mode) {
  Entry entry;
  entry.Final = finalPath.str();
  std::string dir = dirName(finalPath).str();
  if (llvm::Error e = ensureDirectory(dir))
    return e;
  entry.Stage = stagingDirFor(dir);
  if (unnamedFilesUsable()) {
    entry.Fd = ::open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode.value_or(0644));
  }
  if (entry.Fd >= 0) {
    llvm::Error e = writeAll(entry.Fd, data, entry.Final);
    if (!e && mode && ::fchmod(entry.Fd, *mode) != 0)
      e = errnoError(errno, "cannot set the mode of", entry.Final);
    if (e) {
      ::close(entry.Fd);
      return e;
    }
  } else {
    entry.Temporary = temporaryNameIn(entry.Stage, "staged");
    if (llvm::Error e = writeNewFile(entry.Temporary, data, mode))
      return e;
  }
  Entries.push_back(std::move(entry));
  return llvm::Error::success();
}

// Keeps the file now at `final` (if any) under a backup name, so that a
// failed commit can put it back. The name is in the staging directory (same
// file system), never beside `final`: a killed run's staging directory is
// removed by the next run, so no backup is ever left among the outputs.
void keepOlderVersion(const std::string &final, const std::string &stagingDir, std::string &backup, bool &created) {
  std::string name = temporaryNameIn(stagingDir, baseName(final).str() + ".old");
  if (::link(final.c_str(), name.c_str()) == 0)
    backup = std::move(name);
  else
    created = errno == ENOENT;
}

llvm::Error StagedFiles::commit() {
  for (size_t i = 0; i < Entries.size(); ++i) {
    Entry &entry = Entries[i];
    llvm::Error e = llvm::Error::success();
    if (entry.Fd >= 0) {
      if (!(e = syncFileDescriptor(entry.Fd, entry.Final))) {
        keepOlderVersion(entry.Final, entry.Stage, entry.Backup, entry.Created);
        int err = entry.Created ? linkUnnamed(entry.Fd, entry.Final) : EEXIST;
        if (err) {
          if (entry.Created && err != EEXIST) {
            e = errnoError(err, "cannot link", entry.Final);
          } else {
            // Replace an existing file atomically: link to a temporary name, rename over.
            entry.Created = false;
            std::string temporary = temporaryNameIn(entry.Stage, baseName(entry.Final));
            if (int err2 = linkUnnamed(entry.Fd, temporary))
              e = errnoError(err2, "cannot link", temporary);
            else
              e = renameOver(temporary, entry.Final);
          }
        }
      }
      ::close(entry.Fd);
      entry.Fd = -1;
    } else {
      if (!(e = ensureDirectory(dirName(entry.Final)))) {
        keepOlderVersion(entry.Final, entry.Stage, entry.Backup, entry.Created);
        e = renameOver(entry.Temporary, entry.Final);
      }
      ::unlink(entry.Temporary.c_str()); // gone already when renamed
      entry.Temporary.clear();
    }
    if (e) {
      // Keep the module all-or-nothing: undo what was already made visible.
      rollBack(i);
      return e;
    }
  }
  llvm::Error e = llvm::Error::success();
  std::vector<std::string> synced;
  for (const Entry &entry : Entries) {
    if (!entry.Backup.empty())
      ::unlink(entry.Backup.c_str());
    std::string dir = dirName(entry.Final).str();
    if (!e && std::find(synced.begin(), synced.end(), dir) == synced.end()) {
      e = syncDirectory(dir);
      synced.push_back(std::move(dir));
    }
  }
  Entries.clear();
  return e;
}

void StagedFiles::rollBack(size_t count) {
  for (size_t j = 0; j < Entries.size(); ++j) {
    Entry &entry = Entries[j];
    if (j < count && entry.Created)
      ::unlink(entry.Final.c_str());
    else if (j < count && !entry.Backup.empty())
      ::rename(entry.Backup.c_str(), entry.Final.c_str()); // the older version comes back
    else if (!entry.Backup.empty())
      ::unlink(entry.Backup.c_str());
    entry.Backup.clear();
  }
}

} // namespace mlgo
