// --baseline_cache=DIR: the default policy's native size of each module,
// shared by every harvest that names the same directory (several runs,
// Slurm tasks on a shared file system), so that rewards need each module's
// baseline compiled once. An entry is keyed by what decides the baseline:
// the module's bitcode and command line, the compilers (their files) and
// the flags that change code generation. Entries are written whole (a
// uniquely named temporary, then a rename), so concurrent writers of one key
// leave one complete entry; an entry that is unreadable, damaged or another
// key's is a miss, never a size (docs/harvest-batches.md#baseline-cache).
#pragma once

#include "mlgo/compile/CompilerDriver.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// Everything a module's baseline depends on, besides its bitcode.
struct BaselineKeyInputs {
  Problem Decisions = Problem::Inliner;
  CompilerSettings Compiler;
  /// Each compiler file the baseline runs: its resolved path, size and
  /// modification time (compilerIdentity).
  std::string CompilerIdentity;
  std::vector<std::string> ModuleCommandLine; // clang: the corpus' command line
};

/// The resolved path, size and modification time of each compiler file the
/// settings run: an upgraded or replaced compiler is another key.
std::string compilerIdentity(const CompilerSettings &compiler);

/// The key (64 hex digits) of a module's baseline.
std::string baselineKey(const BaselineKeyInputs &inputs, llvm::StringRef bitcode);

/// The key of the default policy's linked binary (harvest-logs --link): the
/// baseline keys of its modules in link order, the link template's words
/// and the extra objects' identities (path, size, modification time), with
/// `what` ("text", "allocated") naming the figure the entry holds.
std::string linkedBaselineKey(const std::vector<std::string> &moduleKeys, const std::vector<std::string> &templateWords,
                              const std::vector<std::string> &extraObjects, llvm::StringRef what);

class BaselineCache {
public:
  /// Uses (and creates) `dir`.
  static llvm::Expected<BaselineCache> open(const std::string &dir);

  /// The cached size of `key`; nullopt when absent or not to be trusted
  /// (`why`, when given, says which: "absent" or what is wrong).
  std::optional<uint64_t> lookup(const std::string &key, std::string *why = nullptr) const;

  /// Stores `size` for `key`, replacing whatever entry is there.
  llvm::Error store(const std::string &key, uint64_t size, llvm::StringRef module) const;

  /// Where `key`'s entry lives.
  std::string entryPath(const std::string &key) const;

private:
  explicit BaselineCache(std::string dir) : Dir(std::move(dir)) {}
  std::string Dir;
};

} // namespace mlgo
