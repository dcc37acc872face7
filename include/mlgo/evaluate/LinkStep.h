// harvest-logs --link: the harvest's native objects linked into the program
// they make, and the size of what ships (docs/harvest-linking.md#linked-size).
// Per-object sizes miss what the link does: functions that become dead or
// are merged, COMDAT copies kept once; the linked size does not.
#pragma once

#include "mlgo/evaluate/NativeSize.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// What the user asked of the link (--link, --link_extra, --link_order,
/// --keep_objects, --link_timeout).
struct LinkSettings {
  std::string Template;                  // "" = no link
  std::vector<std::string> Words;        // Template split as shell words
  std::vector<std::string> ExtraObjects; // objects without bitcode, linked after the modules'
  std::string OrderFile;                 // one module name per line; "" = the corpus' order
  bool KeepObjects = false;
  double TimeoutSeconds = 300;
  uint64_t MemoryLimitMiB = 8192; // the linker's RLIMIT_DATA; 0 = none
  /// Keep each module's object for a link made later, but make none now
  /// (the rounds of --explore: the kept trajectories' objects are linked).
  bool StageOnly = false;
  bool requested() const { return !Template.empty(); }
  bool stagesObjects() const { return requested() || StageOnly; }
};

/// Splits a --link template into words; an error unless it has both
/// {objects} once, as a word of its own, and {output} (also inside words).
llvm::Expected<std::vector<std::string>> parseLinkTemplate(llvm::StringRef linkTemplate);

/// The template's words with {output} replaced by `output` (also inside a
/// word, e.g. -Wl,-Map={output}.map) and the word {objects} by `objects`,
/// one argument each.
std::vector<std::string> linkCommand(const std::vector<std::string> &words, const std::vector<std::string> &objects,
                                     const std::string &output);

/// A --link_order file: its non-blank lines.
llvm::Expected<std::vector<std::string>> readLinkOrderFile(llvm::StringRef path);

/// The planned modules in link order: `listed`'s (a --link_order file or the
/// corpus' recorded link_order.json, named `listName` in errors; names not
/// planned are left out), or else the corpus'. A listed name the corpus
/// does not have or listed twice, or a planned module left out, is an error.
llvm::Expected<std::vector<std::string>> linkOrder(const std::vector<std::string> &corpusModules,
                                                   const std::vector<std::string> &plannedModules,
                                                   const std::vector<std::string> *listed, llvm::StringRef listName);

/// Where a module's object waits for the link: OUT/.mlgo-harvest/objects/,
/// as a path below OUT and as the whole path.
std::string stagedObjectName(llvm::StringRef module);
std::string stagedObjectPath(llvm::StringRef outputDir, llvm::StringRef module);

/// What became of the link: summary.json's `linked`.
struct LinkResult {
  std::string Status = "not_attempted"; // ok, not_attempted, failed, timeout
  std::string Reason;                   // why, when not ok
  std::vector<std::string> Command;
  std::string Output;
  std::string OrderSource; // LinkRequest's
  size_t Objects = 0;
  std::vector<std::string> ExtraObjects;
  std::vector<std::string> ModulesNotLinkable; // failed, timed out, or without an object
  std::optional<BerkeleySizes> Sizes;          // llvm-size's, of the linked binary
  std::string ExitStatus, StderrTail;
  double Seconds = 0;
  /// With --baseline_cache: the default policy's linked binary of the same
  /// modules and template. "stored" (this is the default policy's link),
  /// "cached" (taken from the cache: DefaultSizes set), "absent" (why in
  /// BaselineReason); "" = no cache.
  std::string BaselineStatus, BaselineReason;
  std::optional<uint64_t> DefaultText, DefaultAllocated;
  bool ok() const { return Status == "ok"; }
  nlohmann::ordered_json toJson() const;
};

/// Everything the link step needs from the harvest.
struct LinkRequest {
  LinkSettings Settings;
  std::string OutputDir;
  std::vector<std::string> Order; // linkOrder()
  std::string OrderSource;        // "corpus", the --link_order file, or the corpus' link_order.json
  /// Modules of the order whose latest record is not ok, with their status.
  std::vector<std::string> NotOk;
  std::vector<std::string> AlsoWritable; // --compiler_writable_dir
  std::vector<std::string> AlsoReadable; // --compiler_readable_dir
};

/// Links the staged objects in order into OUT/link/linked, the linker
/// confined (writes to OUT/link/, reads to linkReadExecRules), its memory
/// bounded and killed after the timeout, and measures the result. Not
/// attempted when a module is not ok, has no staged object (a regular file
/// reached through no link below OUT) or one that asks the linker to read
/// other files (linkDirectives), or an extra object is missing. The staged objects are removed after a
/// successful link unless KeepObjects.
LinkResult linkHarvest(const LinkRequest &request);

} // namespace mlgo
