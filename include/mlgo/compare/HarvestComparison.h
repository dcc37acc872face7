// How much smaller or bigger harvest B makes the code than harvest A, module
// by module, and which inlining decisions differ: the numbers behind
// compare-harvests. Both harvests are read with the journal reader every
// consumer of a harvest directory uses (HarvestJournal.h); a module that is
// in one only, or failed in either, is listed, never silently dropped.
#pragma once

#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/log/DecisionSites.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// One module that is ok with a native size in both harvests.
struct ModuleSizeChange {
  std::string Module;
  uint64_t ASize = 0, BSize = 0;
  /// BSize / ASize - 1; none when ASize is 0 and BSize is not (unbounded growth).
  std::optional<double> Change;

  bool grew() const { return BSize > ASize; }
  /// Orders by growth: unbounded first, then the largest change, then the
  /// most bytes added, then by name.
  bool grewMoreThan(const ModuleSizeChange &other) const;
};

/// A module both harvests name whose sizes cannot be compared: what each
/// side says of it ("ok", "failed: compiler_failed", "timeout: timeout",
/// "ok without native_size").
struct UncomparedModule {
  std::string Module, A, B;
};

/// A call site whose policy decision differs between the harvests.
struct FlippedSite {
  std::string Module;
  DecisionSite A;                       // A's record (caller, callee, site, loc, default, decision)
  bool BDecision = false;               // B's decision (the opposite of A's)
  std::optional<std::string> BLocation; // B's loc (the same site, in B's log)
  ModuleSizeChange Sizes;               // the module's size change
};

/// A harvest's linked binary (harvest-logs --link: summary.json's linked).
struct LinkedBinary {
  std::string Status, Reason;              // Status "ok", "not_attempted", "failed" or "timeout"
  std::optional<uint64_t> Text, Allocated; // llvm-size's, when ok
  bool ok() const { return Status == "ok" && Text && Allocated; }
};

/// One harvest directory as the comparison saw it.
struct ComparedHarvest {
  std::string Dir;
  std::string Policy;    // the journal header's policy ("" when it has none)
  size_t Modules = 0;    // modules its journal names
  bool HasSites = false; // any sites file, or the header says --decision_sites
  /// Why a harvest run with --decision_sites wrote none (its summary.json's
  /// decision_sites.reason, e.g. interactive mode); empty when unknown.
  std::string NoSitesReason;
  size_t SitesFilesRead = 0;
  /// Sites files that were expected but missing or invalid, as
  /// (module, error); that module's sites are left out of the comparison.
  std::vector<std::pair<std::string, std::string>> SitesProblems;
  /// Its linked binary; none when it was harvested without --link.
  std::optional<LinkedBinary> Linked;
};

struct HarvestComparison {
  ComparedHarvest A, B;
  /// Over the modules ok with a native size in both.
  uint64_t ASize = 0, BSize = 0;
  std::optional<double> Change;       // BSize / ASize - 1; none when ASize is 0 and BSize is not
  std::optional<double> GeomeanRatio; // of BSize / ASize per module (modules with both sizes > 0)
  size_t GeomeanModules = 0;
  std::vector<ModuleSizeChange> Modules; // by module name
  std::vector<std::string> OnlyInA, OnlyInB;
  std::vector<UncomparedModule> Failed;
  size_t Grown = 0, Shrunk = 0, Unchanged = 0;

  /// Whether decision sites were compared, and if not, why.
  bool SitesCompared = false;
  std::string SitesMessage;
  size_t SitesModules = 0, SitesMatched = 0, SitesOnlyInA = 0, SitesOnlyInB = 0;
  std::vector<FlippedSite> FlippedSites; // by the module's growth, then module, then A's log order

  /// The linked binaries' change (B / A - 1), when both sides have one;
  /// LinkMessage says what was compared, or why not.
  std::optional<double> LinkedTextChange, LinkedAllocatedChange;
  std::string LinkMessage;
  /// The `count` modules that grew most (only modules that grew).
  std::vector<ModuleSizeChange> topGrown(size_t count) const;
};

/// The size comparison of two journals' latest records per module.
HarvestComparison compareJournals(const HarvestJournal &a, const HarvestJournal &b);

/// Matches the decision sites of the modules compared by size, read from
/// `<dir>/logs/<module>.sites.jsonl` of each side, by (module, caller, callee,
/// site), and lists those whose decision flipped. A side without any sites
/// file is said so in SitesMessage; a bad or missing file of one module is a
/// SitesProblem of that side and leaves that module out.
/// Fills LinkedTextChange, LinkedAllocatedChange and LinkMessage from A's
/// and B's Linked.
void compareLinkedBinaries(HarvestComparison &comparison);

void compareDecisionSites(HarvestComparison &comparison, const HarvestJournal &a, const HarvestJournal &b,
                          const DecisionSitesLimits &limits = {});

/// Reads two harvest directories and compares them: sizes, then sites. A
/// directory without a journal, a journal that is invalid, torn or too large
/// is an error naming the file (and line).
llvm::Expected<HarvestComparison> compareHarvestDirectories(llvm::StringRef dirA, llvm::StringRef dirB);

/// The largest journal compareHarvestDirectories reads.
inline constexpr uint64_t MaxComparedJournalBytes = 4ull << 30;

} // namespace mlgo
