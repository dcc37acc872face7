#include "mlgo/compare/HarvestComparison.h"

#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace mlgo {
namespace {

// summary.json is read only for the reason a harvest has no sites.
constexpr uint64_t MaxSummaryBytes = 16 << 20;

llvm::Error invalidComparison(const std::string &message) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "%s", message.c_str());
}

// What a record says of its module, for a module that cannot be compared.
std::string describe(const HarvestRecord &r) {
  if (r.ok())
    return r.NativeSize ? "ok" : "ok without native_size";
  return r.Status + (r.Reason.empty() ? "" : ": " + r.Reason);
}

bool comparable(const HarvestRecord &r) { return r.ok() && r.NativeSize.has_value(); }

std::map<std::string, const HarvestRecord *> byModule(const HarvestJournal &journal) {
  std::map<std::string, const HarvestRecord *> records;
  for (const HarvestJournalLine &line : journal.Latest)
    records[line.Record.Module] = &line.Record;
  return records;
}

std::string policyOf(const HarvestJournal &journal) {
  if (journal.Options && journal.Options->contains("policy") && (*journal.Options)["policy"].is_string())
    return (*journal.Options)["policy"].get<std::string>();
  return "";
}

bool headerSaysSites(const HarvestJournal &journal) {
  if (!journal.Options)
    return false;
  auto it = journal.Options->find("decision_sites");
  return it != journal.Options->end() && it->is_boolean() && it->get<bool>();
}

// The sites of one module of one side, or the problem that leaves it out.
std::optional<std::vector<DecisionSite>> readSide(ComparedHarvest &side, const HarvestRecord &record,
                                                  const DecisionSitesLimits &limits) {
  if (!record.hasLog())
    return std::vector<DecisionSite>(); // no decision, no log: no sites either
  std::string path = harvestSitesPath(side.Dir, record.Module);
  // Below the harvest no link is followed, in any component (sub/m0's logs/sub).
  auto opened = openRegularFileBeneath(side.Dir, harvestSitesName(record.Module));
  if (!opened) {
    llvm::Error e = opened.takeError();
    side.SitesProblems.emplace_back(record.Module, consumeIfMissing(e)
                                                       ? path + " is missing (the module has a log with " +
                                                             std::to_string(record.Decisions) + " decisions)"
                                                       : llvm::toString(std::move(e)));
    return std::nullopt;
  }
  auto sites = readDecisionSites(opened->get(), path, limits);
  if (!sites) {
    side.SitesProblems.emplace_back(record.Module, llvm::toString(sites.takeError()));
    return std::nullopt;
  }
  ++side.SitesFilesRead;
  return std::move(*sites);
}

} // namespace

bool ModuleSizeChange::grewMoreThan(const ModuleSizeChange &other) const {
  // Unbounded growth (from 0 bytes) first.
  if (Change.has_value() != other.Change.has_value())
    return !Change.has_value();
  if (Change && *Change != *other.Change)
    return *Change > *other.Change;
  int64_t added = static_cast<int64_t>(BSize - ASize), otherAdded = static_cast<int64_t>(other.BSize - other.ASize);
  if (added != otherAdded)
    return added > otherAdded;
  return Module < other.Module;
}

std::vector<ModuleSizeChange> HarvestComparison::topGrown(size_t count) const {
  std::vector<ModuleSizeChange> grown;
  for (const ModuleSizeChange &m : Modules)
    if (m.grew())
      grown.push_back(m);
  std::sort(grown.begin(), grown.end(),
            [](const ModuleSizeChange &x, const ModuleSizeChange &y) { return x.grewMoreThan(y); });
  if (grown.size() > count)
    grown.resize(count);
  return grown;
}

HarvestComparison compareJournals(const HarvestJournal &a, const HarvestJournal &b) {
  HarvestComparison c;
  c.A.Policy = policyOf(a);
  c.B.Policy = policyOf(b);
  c.A.Modules = a.Latest.size();
  c.B.Modules = b.Latest.size();
  auto inA = byModule(a), inB = byModule(b);
  double logSum = 0;
  for (const auto &[module, ra] : inA) {
    auto it = inB.find(module);
    if (it == inB.end()) {
      c.OnlyInA.push_back(module);
      continue;
    }
    const HarvestRecord &rb = *it->second;
    if (!comparable(*ra) || !comparable(rb)) {
      c.Failed.push_back({module, describe(*ra), describe(rb)});
      continue;
    }
    ModuleSizeChange m{module, *ra->NativeSize, *rb.NativeSize, std::nullopt};
    if (m.ASize > 0)
      m.Change = static_cast<double>(m.BSize) / static_cast<double>(m.ASize) - 1;
    else if (m.BSize == 0)
      m.Change = 0;
    c.ASize += m.ASize;
    c.BSize += m.BSize;
    if (m.ASize > 0 && m.BSize > 0) {
      logSum += std::log(static_cast<double>(m.BSize) / static_cast<double>(m.ASize));
      ++c.GeomeanModules;
    }
    (m.BSize > m.ASize ? c.Grown : m.BSize < m.ASize ? c.Shrunk : c.Unchanged) += 1;
    c.Modules.push_back(std::move(m));
  }
  for (const auto &[module, rb] : inB)
    if (!inA.count(module))
      c.OnlyInB.push_back(module);
  if (c.ASize > 0)
    c.Change = static_cast<double>(c.BSize) / static_cast<double>(c.ASize) - 1;
  else if (c.BSize == 0)
    c.Change = 0;
  if (c.GeomeanModules > 0)
    c.GeomeanRatio = std::exp(logSum / static_cast<double>(c.GeomeanModules));
  return c;
}

void compareDecisionSites(HarvestComparison &c, const HarvestJournal &a, const HarvestJournal &b,
                          const DecisionSitesLimits &limits) {
  auto inA = byModule(a), inB = byModule(b);
  // A side has sites when its header says so or any compared module has a file.
  auto hasSites = [&](ComparedHarvest &side, const HarvestJournal &journal) {
    side.HasSites = headerSaysSites(journal);
    for (const ModuleSizeChange &m : c.Modules) {
      if (side.HasSites)
        break;
      auto present = existsBeneath(side.Dir, harvestSitesName(m.Module));
      side.HasSites = !present || *present; // a link on the way: reported when the file is read
      if (!present)
        llvm::consumeError(present.takeError());
    }
  };
  hasSites(c.A, a);
  hasSites(c.B, b);
  if (!c.A.HasSites || !c.B.HasSites) {
    std::string missing;
    for (const ComparedHarvest *side : {&c.A, &c.B})
      if (!side->HasSites)
        missing += (missing.empty() ? "" : " and ") + std::string(side == &c.A ? "A (" : "B (") + side->Dir +
                   (side->NoSitesReason.empty() ? "" : ": " + side->NoSitesReason) + ")";
    c.SitesMessage = missing + (c.A.HasSites || c.B.HasSites ? " has" : " have") +
                     " no decision sites files (logs/<module>.sites.jsonl, written by harvest-logs "
                     "--decision_sites): flipped sites are not compared";
    return;
  }
  c.SitesCompared = true;
  // Modules by growth, so that the flipped sites come out in that order and,
  // within a module, in A's log order.
  std::vector<const ModuleSizeChange *> byGrowth;
  for (const ModuleSizeChange &m : c.Modules)
    byGrowth.push_back(&m);
  std::sort(byGrowth.begin(), byGrowth.end(),
            [](const ModuleSizeChange *x, const ModuleSizeChange *y) { return x->grewMoreThan(*y); });
  for (const ModuleSizeChange *module : byGrowth) {
    const ModuleSizeChange &m = *module;
    auto sitesA = readSide(c.A, *inA.at(m.Module), limits);
    auto sitesB = readSide(c.B, *inB.at(m.Module), limits);
    if (!sitesA || !sitesB)
      continue;
    ++c.SitesModules;
    std::map<std::tuple<std::string, std::string, uint64_t>, const DecisionSite *> inBSites;
    for (const DecisionSite &s : *sitesB)
      inBSites.emplace(std::tuple{s.Caller, s.Callee, s.Site}, &s);
    size_t matched = 0;
    for (DecisionSite &s : *sitesA) {
      auto it = inBSites.find(std::tuple{s.Caller, s.Callee, s.Site});
      if (it == inBSites.end()) {
        ++c.SitesOnlyInA;
        continue;
      }
      ++matched;
      if (it->second->Decision != s.Decision)
        c.FlippedSites.push_back({m.Module, std::move(s), it->second->Decision, it->second->Location, m});
    }
    c.SitesMatched += matched;
    c.SitesOnlyInB += sitesB->size() - matched;
  }
  size_t problems = c.A.SitesProblems.size() + c.B.SitesProblems.size();
  c.SitesMessage =
      "compared the decision sites of " + std::to_string(c.SitesModules) + " modules" +
      (problems ? "; " + std::to_string(problems) + " sites files missing or invalid (see sites_problems)" : "");
}

namespace {

// summary.json's linked, as far as it is well formed (the journal is what is
// compared; a damaged link record only loses the link figures).
LinkedBinary linkedBinary(const nlohmann::json &linked) {
  LinkedBinary binary;
  auto text = [&](const char *key) {
    return linked.contains(key) && linked[key].is_string() ? linked[key].get<std::string>() : "";
  };
  binary.Status = text("status");
  binary.Reason = text("reason");
  if (linked.contains("sizes") && linked["sizes"].is_object()) {
    const auto &sizes = linked["sizes"];
    if (sizes.contains("text") && sizes["text"].is_number_unsigned())
      binary.Text = sizes["text"].get<uint64_t>();
    if (sizes.contains("allocated") && sizes["allocated"].is_number_unsigned())
      binary.Allocated = sizes["allocated"].get<uint64_t>();
  }
  return binary;
}

std::string describeLink(const std::optional<LinkedBinary> &linked) {
  if (!linked)
    return "harvested without --link";
  return "its link is " + (linked->Status.empty() ? std::string("unreadable") : linked->Status) +
         (linked->Reason.empty() ? "" : " (" + linked->Reason + ")");
}

} // namespace

void compareLinkedBinaries(HarvestComparison &c) {
  bool a = c.A.Linked && c.A.Linked->ok(), b = c.B.Linked && c.B.Linked->ok();
  auto ratio = [](uint64_t from, uint64_t to) -> std::optional<double> {
    if (from == 0)
      return std::nullopt;
    return static_cast<double>(to) / static_cast<double>(from) - 1;
  };
  if (a && b) {
    c.LinkedTextChange = ratio(*c.A.Linked->Text, *c.B.Linked->Text);
    c.LinkedAllocatedChange = ratio(*c.A.Linked->Allocated, *c.B.Linked->Allocated);
    c.LinkMessage = "compared the linked binaries";
  } else if (!c.A.Linked && !c.B.Linked) {
    c.LinkMessage = "neither harvest has a linked binary (harvest-logs --link)";
  } else if (a || b) {
    c.LinkMessage = std::string("only ") + (a ? "A" : "B") + " has a linked binary: " + (a ? "B " : "A ") +
                    describeLink(a ? c.B.Linked : c.A.Linked);
  } else {
    c.LinkMessage =
        "neither harvest has a linked binary: A " + describeLink(c.A.Linked) + ", B " + describeLink(c.B.Linked);
  }
}

llvm::Expected<HarvestComparison> compareHarvestDirectories(llvm::StringRef dirA, llvm::StringRef dirB) {
  HarvestJournal journals[2];
  llvm::StringRef dirs[2] = {dirA, dirB};
  for (int i = 0; i < 2; ++i) {
    std::string name = i == 0 ? "A" : "B";
    if (!llvm::sys::fs::is_directory(dirs[i]))
      return invalidComparison(name + ": " + dirs[i].str() + " is not a directory");
    std::string path = joinPath(dirs[i], "harvest.jsonl");
    llvm::sys::fs::file_status status;
    if (std::error_code ec = llvm::sys::fs::status(path, status))
      return invalidComparison(name + ": " + path + ": " + ec.message() +
                               " (not a harvest directory: harvest-logs or " + "merge-harvest writes harvest.jsonl)");
    if (status.getSize() > MaxComparedJournalBytes)
      return invalidComparison(name + ": " + path + " has " + std::to_string(status.getSize()) +
                               " bytes, more than the " + std::to_string(MaxComparedJournalBytes) +
                               " compare-harvests reads");
    if (llvm::Error e = checkNoUnfinishedCommit(dirs[i]))
      return invalidComparison(name + ": " + llvm::toString(std::move(e)));
    auto journal = readHarvestJournal(path);
    if (!journal)
      return invalidComparison(name + ": " + llvm::toString(journal.takeError()));
    // A killed harvest: its last module is not recorded, so it is not what the
    // harvest would report. Finishing the harvest (resume) repairs it.
    if (journal->TornTail)
      return invalidComparison(name + ": " + path +
                               ": the last line is torn (it has no newline: the harvest was killed "
                               "while writing it); resume the harvest with harvest-logs to finish it, then compare");
    journals[i] = std::move(*journal);
  }
  HarvestComparison c = compareJournals(journals[0], journals[1]);
  c.A.Dir = dirA.str();
  c.B.Dir = dirB.str();
  // A run asked for sites but could not write them: its summary says why.
  for (ComparedHarvest *side : {&c.A, &c.B}) {
    std::string path = joinPath(side->Dir, "summary.json");
    uint64_t size = 0;
    if (llvm::sys::fs::file_size(path, size) || size > MaxSummaryBytes)
      continue;
    auto summary = readHarvestSummary(path);
    if (!summary) {
      llvm::consumeError(summary.takeError()); // informational only: the journal is what is compared
      continue;
    }
    if (!*summary)
      continue;
    if (auto linked = (*summary)->Value.find("linked"); linked != (*summary)->Value.end() && linked->is_object())
      side->Linked = linkedBinary(*linked);
    auto it = (*summary)->Value.find("decision_sites");
    if (it != (*summary)->Value.end() && it->is_object() && it->contains("reason") && (*it)["reason"].is_string())
      side->NoSitesReason = (*it)["reason"].get<std::string>();
  }
  compareLinkedBinaries(c);
  compareDecisionSites(c, journals[0], journals[1]);
  return c;
}

} // namespace mlgo
