#include "mlgo/deploy/DecisionExport.h"

#include "mlgo/corpus/BitcodeCheck.h"
#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/log/DecisionSites.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"

#include <map>
#include <set>

namespace mlgo {
namespace {

// The phrases LLVM's replay parser splits a remark at: a name holding one
// would be read as another name.
constexpr const char *Positive = "' inlined into '";
constexpr const char *Negative = "' will not be inlined into '";
constexpr const char *AtCallSite = " at callsite ";

// Why the remark for `site` could not be parsed back as written, or "".
std::string remarkProblem(const DecisionSite &site) {
  if (!site.ReplayLocation)
    return site.HasReplayLocation ? "no debug location (build the corpus with -g or -gline-tables-only)"
                                  : "the sites file has no replay_loc (harvested before export-decisions existed)";
  if (site.Caller.empty() || site.Callee.empty())
    return "an indirect call";
  for (const std::string *text : {&site.Caller, &site.Callee, &*site.ReplayLocation})
    for (const char *phrase : {Positive, Negative, AtCallSite, ": '", ";", "\n", "\r"})
      if (llvm::StringRef(*text).contains(phrase))
        return std::string("a name or location holding '") + phrase + "', which the replay parser splits at";
  return "";
}

std::string remark(const DecisionSite &site) {
  return "export-decisions: '" + site.Callee + (site.Decision ? Positive : Negative) + site.Caller + "'" + AtCallSite +
         *site.ReplayLocation + ";";
}

// The replay key LLVM looks a site up by: callee name and call-site location.
std::string replayKey(const DecisionSite &site) { return site.Callee + '\0' + *site.ReplayLocation; }

std::string headerString(const HarvestJournal &journal, const char *key) {
  if (journal.Options && journal.Options->contains(key) && (*journal.Options)[key].is_string())
    return (*journal.Options)[key].get<std::string>();
  return "";
}

} // namespace

llvm::Expected<DecisionExport> exportDecisions(llvm::StringRef harvestDir, llvm::StringRef corpusDir) {
  if (llvm::Error e = checkNoUnfinishedCommit(harvestDir))
    return std::move(e);
  std::string journalPath = joinPath(harvestDir, "harvest.jsonl");
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(journalPath, status); ec || !llvm::sys::fs::is_regular_file(status))
    return llvm::createStringError("%s: %s (not a harvest directory: harvest-logs writes harvest.jsonl)",
                                   journalPath.c_str(), ec ? ec.message().c_str() : "not a regular file");
  auto journal = readHarvestJournal(journalPath);
  if (!journal)
    return journal.takeError();
  if (journal->TornTail)
    return llvm::createStringError("%s: the last line is torn (the harvest was killed while writing it); resume the "
                                   "harvest with harvest-logs to finish it, then export",
                                   journalPath.c_str());
  if (journal->Latest.empty())
    return llvm::createStringError("%s names no module", journalPath.c_str());
  if (headerString(*journal, "problem") != "" && headerString(*journal, "problem") != "inliner")
    return llvm::createStringError("%s: a %s harvest; export-decisions exports inlining decisions",
                                   harvestDir.str().c_str(), headerString(*journal, "problem").c_str());
  DecisionExport out;
  out.Compiler = headerString(*journal, "compiler");

  // Every module's sites first: the replay keys are checked across modules,
  // because one remarks file serves the whole build.
  struct Read {
    ModuleDecisions Module;
    std::vector<DecisionSite> Sites;
  };
  std::vector<Read> modules;
  bool anySites = false;
  for (const HarvestJournalLine &line : journal->Latest) {
    const HarvestRecord &record = line.Record;
    if (!record.ok()) {
      out.Unexported.push_back({record.Module, "the module is " + record.Status +
                                                   (record.Reason.empty() ? "" : " (" + record.Reason + ")")});
      continue;
    }
    Read read;
    read.Module.Module = record.Module;
    if (record.hasLog()) {
      std::string path = harvestSitesPath(harvestDir, record.Module);
      auto opened = openRegularFileBeneath(harvestDir, harvestSitesName(record.Module));
      if (!opened) {
        llvm::Error e = opened.takeError();
        out.Unexported.push_back({record.Module, consumeIfMissing(e) ? path + " is missing (harvest with "
                                                                              "--mode=plugin --decision_sites)"
                                                                     : llvm::toString(std::move(e))});
        continue;
      }
      auto sites = readDecisionSites(opened->get(), path);
      if (!sites) {
        out.Unexported.push_back({record.Module, llvm::toString(sites.takeError())});
        continue;
      }
      if (sites->size() != record.Decisions) {
        out.Unexported.push_back({record.Module, path + " has " + std::to_string(sites->size()) +
                                                     " records, and the module's log " +
                                                     std::to_string(record.Decisions) + " decisions"});
        continue;
      }
      anySites = true;
      read.Sites = std::move(*sites);
    }
    auto bitcode = readFileBeneath(corpusDir, record.Module + ".bc");
    if (!bitcode) {
      out.Unexported.push_back({record.Module, llvm::toString(bitcode.takeError())});
      continue;
    }
    auto source = bitcodeSourceFileName((*bitcode)->getBuffer());
    if (!source) {
      out.Unexported.push_back(
          {record.Module, joinPath(corpusDir, record.Module + ".bc") + ": " + llvm::toString(source.takeError())});
      continue;
    }
    read.Module.SourceFileName = *source;
    modules.push_back(std::move(read));
  }
  if (!anySites && std::any_of(journal->Latest.begin(), journal->Latest.end(),
                               [](const HarvestJournalLine &l) { return l.Record.hasLog(); }))
    return llvm::createStringError("%s has no decision sites: harvest with --mode=plugin --decision_sites",
                                   harvestDir.str().c_str());

  std::map<std::string, std::set<bool>> decisionsByKey;
  for (const Read &read : modules)
    for (const DecisionSite &site : read.Sites)
      if (site.ReplayLocation)
        decisionsByKey[replayKey(site)].insert(site.Decision);

  std::set<std::string> remarked;
  for (Read &read : modules) {
    out.Decisions += read.Sites.size();
    for (const DecisionSite &site : read.Sites) {
      if (site.Decision == site.Default)
        continue;
      read.Module.Decisions.push_back({site.Caller, site.Callee, site.Site, site.Decision});
      ++(site.Decision ? out.Inlined : out.NotInlined);
      std::string problem = remarkProblem(site);
      if (problem.empty() && decisionsByKey[replayKey(site)].size() > 1)
        problem = "another logged site has the same callee and call-site location (" + *site.ReplayLocation +
                  ") and the opposite decision";
      if (!problem.empty()) {
        out.Unreplayable.push_back({read.Module.Module, site.Caller, site.Callee, problem, site.Site});
        continue;
      }
      if (remarked.insert(replayKey(site)).second)
        out.ReplayRemarks.push_back(remark(site));
    }
    out.Modules.push_back(std::move(read.Module));
  }
  return out;
}

std::string decisionsFileText(const DecisionExport &exported) {
  std::string text;
  for (const ModuleDecisions &m : exported.Modules)
    text += inlineDecisionsLine(m);
  return text;
}

std::string replayRemarksText(const DecisionExport &exported) {
  std::string text;
  for (const std::string &line : exported.ReplayRemarks)
    text += line + "\n";
  return text;
}

nlohmann::ordered_json exportReport(const DecisionExport &exported) {
  using Json = nlohmann::ordered_json;
  Json report;
  report["modules"] = exported.Modules.size();
  report["decisions"] = exported.Decisions;
  report["exported"] = {{"inline", exported.Inlined}, {"not_inline", exported.NotInlined}};
  report["replay"] = {{"remarks", exported.ReplayRemarks.size()},
                      {"decisions_expressed", exported.Inlined + exported.NotInlined - exported.Unreplayable.size()},
                      {"decisions_not_expressed", exported.Unreplayable.size()}};
  Json unreplayable = Json::array();
  for (const UnreplayableDecision &u : exported.Unreplayable)
    unreplayable.push_back(
        {{"module", u.Module}, {"caller", u.Caller}, {"callee", u.Callee}, {"site", u.Site}, {"reason", u.Reason}});
  report["not_replayable"] = std::move(unreplayable);
  Json unexported = Json::array();
  for (const UnexportedModule &u : exported.Unexported)
    unexported.push_back({{"module", u.Module}, {"reason", u.Reason}});
  report["modules_not_exported"] = std::move(unexported);
  report["compiler"] = exported.Compiler;
  return report;
}

} // namespace mlgo
