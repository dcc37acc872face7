#include "mlgo/harvest/HarvestTrajectories.h"

#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/Harvester.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/policy/Trajectory.h"
#include "mlgo/support/PathUtil.h"

namespace mlgo {

namespace {

// Collects the inlining_decision column of the events `visit` walks.
template <typename Visit> llvm::Expected<DecisionSequence> decisionsOf(const std::string &logPath, Visit visit) {
  DecisionSequence decisions;
  std::optional<size_t> column;
  llvm::Error error = visit([&](TrainingLogReader &reader, TrainingLogReader::Event event) -> llvm::Error {
    if (event == TrainingLogReader::Event::Header) {
      column = reader.header().find("inlining_decision");
      if (!column)
        return llvm::createStringError("%s has no inlining_decision: not an inliner log", logPath.c_str());
    }
    if (event == TrainingLogReader::Event::Observation)
      decisions.push_back(reader.header().Features[*column].elementAsInt(reader.feature(*column), 0) != 0);
    return llvm::Error::success();
  });
  if (error)
    return std::move(error);
  return decisions;
}

} // namespace

llvm::Expected<DecisionSequence> loggedDecisions(const std::string &logPath) {
  return decisionsOf(logPath, [&](auto &&visitor) { return visitLog(logPath, visitor); });
}

llvm::Expected<DecisionSequence> harvestedDecisions(llvm::StringRef harvestDir, const std::string &module) {
  std::string relative = harvestLogName(module);
  return decisionsOf(joinPath(harvestDir, relative),
                     [&](auto &&visitor) { return visitLogBeneath(harvestDir, relative, visitor); });
}

llvm::Expected<HarvestTrajectoryCount> writeHarvestTrajectories(llvm::StringRef harvestDir, llvm::raw_ostream &os) {
  if (llvm::Error e = checkNoUnfinishedCommit(harvestDir))
    return std::move(e);
  auto journal = readHarvestJournal(harvestJournalPath(harvestDir));
  if (!journal)
    return journal.takeError();
  if (journal->Options) {
    auto problem = journal->Options->find("problem");
    if (problem != journal->Options->end() && *problem != "inliner")
      return llvm::createStringError("%s is a %s harvest: only inlining trajectories can be replayed",
                                     harvestDir.str().c_str(), problem->dump().c_str());
  } else if (journal->Latest.empty()) {
    return llvm::createStringError("%s has no harvest journal (harvest.jsonl)", harvestDir.str().c_str());
  }
  HarvestTrajectoryCount count;
  for (const HarvestJournalLine &line : journal->Latest) {
    const HarvestRecord &record = line.Record;
    if (!record.ok()) {
      ++count.FailedSkipped;
      continue;
    }
    DecisionSequence decisions;
    if (record.hasLog()) {
      auto read = harvestedDecisions(harvestDir, record.Module);
      if (!read)
        return read.takeError();
      decisions = std::move(*read);
    }
    if (decisions.size() != record.Decisions)
      return llvm::createStringError("%s: the journal says %zu decisions and its log has %zu", record.Module.c_str(),
                                     record.Decisions, decisions.size());
    os << trajectoryLine(record.Module, decisions);
    ++count.Modules;
    count.Decisions += decisions.size();
  }
  return count;
}

} // namespace mlgo
