// How an exploration's result replaces its base, crash-consistently
// (docs/harvest-exploration.md#what-an-interrupted-exploration-leaves).
//
// The kept trajectories replace the base's logs, journal records and staged
// objects, and the exploration's own files follow (the link, explore.jsonl,
// the profiles, summary.json). A run killed half-way through that would
// leave a directory whose "base" is partly the kept trajectories, and the
// same command would explore on from them as if they were the base. So the
// whole result is first staged in OUT/explore/commit.tmp/ (the new journal,
// the table, the base's summary, the kept logs and every object to link,
// as hard links), renamed to OUT/explore/commit/ in one step, and only then
// installed. Installing is idempotent: a run that finds OUT/explore/commit/
// installs it again, whatever had been installed, and explores nothing.
#pragma once

#include "mlgo/explore/Exploration.h"
#include "mlgo/explore/ImitationDataset.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

/// Below OUT: the staged result, while it is written and once it is whole.
inline constexpr const char *CommitStaging = "explore/commit.tmp";
inline constexpr const char *CommitDir = "explore/commit";

/// What the exploration found, as the commit installs it.
struct CommitPlan {
  struct Kept {
    std::string Module;
    unsigned Round = 0;
    std::string JournalLine; // its record in its round's journal
  };
  std::vector<Kept> Improved;             // the modules whose kept trajectory is not the base
  std::vector<ImitationModule> Imitation; // every module, for the profiles and the dataset
  unsigned Rounds = 0;                    // that ran
  ExploreResult Result;
};

/// Stages `plan` and `table` (explore.jsonl's text) in OUT/explore/commit.tmp/
/// and renames it to OUT/explore/commit/. Nothing of the base is changed.
llvm::Error stageCommit(const HarvestOptions &options, const CommitPlan &plan, const std::string &table);

/// Installs OUT/explore/commit/ (the kept logs and journal, the kept
/// program's link, explore.jsonl, the profiles, summary.json's explore, the
/// --tfrecord trajectories) and removes it.
llvm::Expected<ExploreResult> finishCommit(const HarvestOptions &options, const ExploreSettings &settings);

} // namespace mlgo
