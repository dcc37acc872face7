// A harvest's decision provenance, OUT/logs/<module>.sites.jsonl (written by
// harvest-logs --decision_sites): one record per observation of the module's
// log, in log order, naming the call site the decision was about
// (decision_sites.schema.json). The file is data from someone else: every
// line is checked (exact keys, types, UTF-8, a bounded length), and a bad
// line is an error naming the file and the line, never an exception.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace mlgo {

/// One observation's call site and the two decisions about it.
struct DecisionSite {
  std::string Caller, Callee;
  /// Which decision about a call from Caller to Callee this is (0, 1, ...);
  /// with them it names the site alike in two harvests of the same module.
  uint64_t Site = 0;
  std::optional<std::string> Location; // "file:line:col"; none without debug info
  bool Default = false;                // the default heuristic's decision
  bool Decision = false;               // the policy's decision
  /// The default heuristic's threshold minus its inline cost (plugin mode);
  /// none when the cost was not variable or the file predates the key.
  std::optional<int64_t> CostMargin;
  bool HasCostMargin = false; // the key was present (written back as read)
  /// How LLVM's -cgscc-inline-replay names the site (its default format,
  /// LineColumnDiscriminator: "caller:line-offset:col[.discriminator] @ ...");
  /// none without debug info or in files older than the key.
  std::optional<std::string> ReplayLocation;
  bool HasReplayLocation = false;

  auto key() const { return std::tie(Caller, Callee, Site); }
  nlohmann::ordered_json toJson() const;
};

/// Bounds on what a sites file may cost to read.
struct DecisionSitesLimits {
  size_t MaxLineBytes = 1 << 20;      // a line longer than this is an error
  uint64_t MaxFileBytes = 1ull << 30; // so is a larger file
};

/// Checks one parsed line; `where` ("FILE line N") begins the error.
llvm::Expected<DecisionSite> decisionSiteFromJson(const nlohmann::ordered_json &value, llvm::StringRef where);

/// Reads and validates a whole sites file, in file order. A site named twice
/// (same caller, callee and ordinal) is an error, as is a missing file.
llvm::Expected<std::vector<DecisionSite>> readDecisionSites(llvm::StringRef path,
                                                            const DecisionSitesLimits &limits = {});
/// The same from a file already open (compare-harvests opens it below its
/// harvest without following links, BeneathPath.h); `path` names it.
llvm::Expected<std::vector<DecisionSite>> readDecisionSites(int fd, llvm::StringRef path,
                                                            const DecisionSitesLimits &limits = {});

} // namespace mlgo
