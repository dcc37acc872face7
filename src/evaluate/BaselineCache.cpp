#include "mlgo/evaluate/BaselineCache.h"

#include "mlgo/compile/OwnLlvmTools.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace mlgo {
namespace {

constexpr const char *Format = "mlgo-baseline-cache/1";
// An entry is a hundred bytes or so: anything much larger is not one.
constexpr uint64_t MaxEntryBytes = 4096;

// Relative to the cache: a fan-out directory of 256, then the entry.
std::string entryName(const std::string &key) { return key.substr(0, 2) + "/" + key + ".json"; }

std::string sha256Hex(llvm::ArrayRef<llvm::StringRef> parts) {
  llvm::SHA256 hash;
  for (llvm::StringRef part : parts) {
    // Length-prefixed, so that no two different lists hash alike.
    std::string length = std::to_string(part.size()) + ":";
    hash.update(length);
    hash.update(part);
  }
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

// Binds the size to its key: an entry edited by hand or damaged on disk
// no longer checks. (Not a signature: whoever may write the directory may
// write a consistent entry; docs/security.md.)
std::string entryCheck(const std::string &key, uint64_t size) { return sha256Hex({Format, key, std::to_string(size)}); }

std::string fileIdentity(const std::string &program) {
  std::string path = resolvedProgram(program);
  llvm::sys::fs::file_status status;
  if (path.empty() || llvm::sys::fs::status(path, status))
    return program + " (not found)";
  return path + " " + std::to_string(status.getSize()) + " " +
         std::to_string(status.getLastModificationTime().time_since_epoch().count());
}

// A file named by path (not looked up in PATH, as programs are).
std::string pathIdentity(const std::string &path) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status))
    return path + " (not found)";
  return absolutePath(path) + " " + std::to_string(status.getSize()) + " " +
         std::to_string(status.getLastModificationTime().time_since_epoch().count());
}

} // namespace

std::string compilerIdentity(const CompilerSettings &compiler) {
  switch (compiler.Kind) {
  case CompilerKind::Opt:
    return "opt " + fileIdentity(compiler.Opt) + "; llc " + fileIdentity(compiler.Llc);
  case CompilerKind::Llc:
    return "llc " + fileIdentity(compiler.Llc);
  case CompilerKind::Clang:
    return "clang " + fileIdentity(compiler.Clang);
  }
  return "";
}

std::string baselineKey(const BaselineKeyInputs &in, llvm::StringRef bitcode) {
  const CompilerSettings &c = in.Compiler;
  std::vector<std::string> parts = {Format, problemName(in.Decisions),
                                    c.Kind == CompilerKind::Opt   ? "opt"
                                    : c.Kind == CompilerKind::Llc ? "llc"
                                                                  : "clang",
                                    in.CompilerIdentity, c.Kind == CompilerKind::Opt ? c.Passes : ""};
  auto list = [&](const char *name, const std::vector<std::string> &items) {
    parts.push_back(name);
    parts.push_back(std::to_string(items.size()));
    parts.insert(parts.end(), items.begin(), items.end());
  };
  list("llc_flags", c.Kind == CompilerKind::Clang ? std::vector<std::string>{} : c.LlcFlags);
  list("extra_compiler_flags", c.ExtraFlags);
  list("command_line", c.Kind == CompilerKind::Clang ? in.ModuleCommandLine : std::vector<std::string>{});
  std::vector<llvm::StringRef> refs(parts.begin(), parts.end());
  refs.push_back(bitcode);
  return sha256Hex(refs);
}

std::string linkedBaselineKey(const std::vector<std::string> &moduleKeys, const std::vector<std::string> &templateWords,
                              const std::vector<std::string> &extraObjects, llvm::StringRef what) {
  std::vector<std::string> parts = {Format, "linked", what.str(), std::to_string(moduleKeys.size())};
  parts.insert(parts.end(), moduleKeys.begin(), moduleKeys.end());
  parts.push_back(std::to_string(templateWords.size()));
  parts.insert(parts.end(), templateWords.begin(), templateWords.end());
  parts.push_back(std::to_string(extraObjects.size()));
  for (const std::string &extra : extraObjects)
    parts.push_back(pathIdentity(extra)); // another build of the same file is another link
  std::vector<llvm::StringRef> refs(parts.begin(), parts.end());
  return sha256Hex(refs);
}

llvm::Expected<BaselineCache> BaselineCache::open(const std::string &dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "--baseline_cache=%s: cannot create it: %s", dir.c_str(), ec.message().c_str());
  if (!llvm::sys::fs::is_directory(dir))
    return llvm::createStringError(std::make_error_code(std::errc::not_a_directory),
                                   "--baseline_cache=%s is not a directory", dir.c_str());
  return BaselineCache(dir);
}

std::string BaselineCache::entryPath(const std::string &key) const { return joinPath(Dir, entryName(key)); }

std::optional<uint64_t> BaselineCache::lookup(const std::string &key, std::string *why) const {
  auto miss = [&](std::string reason) -> std::optional<uint64_t> {
    if (why)
      *why = std::move(reason);
    return std::nullopt;
  };
  std::string path = entryPath(key);
  // The fan-out directory as it is, never through a link planted in its
  // place (that would send every harvest's entries elsewhere): a miss.
  auto fanOut = openParentBeneath(Dir, entryName(key));
  if (!fanOut) {
    llvm::Error e = fanOut.takeError();
    return miss(consumeIfMissing(e) ? "absent" : llvm::toString(std::move(e)));
  }
  struct stat status;
  if (::fstatat(fanOut->Dir.get(), fanOut->Name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0)
    return miss(errno == ENOENT ? "absent" : "cannot read " + path + ": " + std::strerror(errno));
  if (!S_ISREG(status.st_mode))
    return miss(path + " is not a regular file");
  if (static_cast<uint64_t>(status.st_size) > MaxEntryBytes)
    return miss(path + " is too large to be an entry");
  FileDescriptor fd(::openat(fanOut->Dir.get(), fanOut->Name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd)
    return miss("cannot read " + path + ": " + std::strerror(errno));
  std::string text;
  char chunk[MaxEntryBytes + 1];
  for (ssize_t n; text.size() <= MaxEntryBytes && (n = ::read(fd.get(), chunk, sizeof(chunk))) != 0;) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return miss("cannot read " + path + ": " + std::strerror(errno));
    text.append(chunk, static_cast<size_t>(n));
  }
  if (text.size() > MaxEntryBytes)
    return miss(path + " is too large to be an entry");
  nlohmann::json entry = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!entry.is_object() || !entry.contains("format") || entry["format"] != Format)
    return miss(path + " is not a baseline cache entry");
  if (!entry.contains("key") || entry["key"] != key)
    return miss(path + " is another module's entry");
  if (!entry.contains("native_size") || !entry["native_size"].is_number_unsigned() || !entry.contains("check") ||
      !entry["check"].is_string())
    return miss(path + " lacks its size or check");
  uint64_t size = entry["native_size"].get<uint64_t>();
  if (entry["check"] != entryCheck(key, size))
    return miss(path + " does not check: damaged or edited");
  return size;
}

llvm::Error BaselineCache::store(const std::string &key, uint64_t size, llvm::StringRef module) const {
  std::string path = entryPath(key);
  std::string dir = dirName(path).str();
  // Made or opened without following a link: an entry is never written
  // through a fan-out directory planted as one.
  auto fanOut = openParentBeneath(Dir, entryName(key), /*create=*/true);
  if (!fanOut)
    return fanOut.takeError();
  nlohmann::ordered_json entry = {{"format", Format},
                                  {"key", key},
                                  {"native_size", size},
                                  {"check", entryCheck(key, size)},
                                  {"module", module.str()}};
  // Unique across the processes and machines that share the directory
  // (pids repeat across machines): a writer never touches another's file.
  char host[64] = "";
  ::gethostname(host, sizeof(host) - 1);
  std::random_device random;
  std::string temporaryName =
      "." + key.substr(0, 16) + ".tmp." + host + "." + std::to_string(::getpid()) + "." + std::to_string(random());
  std::string temporary = joinPath(dir, temporaryName);
  int dirFd = fanOut->Dir.get();
  if (llvm::Error e = writeNewFileAt(dirFd, temporaryName, temporary, entry.dump() + "\n"))
    return e;
  if (::renameat(dirFd, temporaryName.c_str(), dirFd, fanOut->Name.c_str()) != 0) {
    int err = errno;
    ::unlinkat(dirFd, temporaryName.c_str(), 0);
    return llvm::createStringError(std::error_code(err, std::generic_category()), "cannot rename %s to %s: %s",
                                   temporary.c_str(), path.c_str(), std::strerror(err));
  }
  return syncDirectoryDescriptor(dirFd, dir);
}

} // namespace mlgo
