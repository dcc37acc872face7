// Recorded inlining trajectories: per module, the sequence of decisions a
// compile took, as `--policy=replay:FILE` reads them and `training-log
// trajectories` writes them (corpus_formats/trajectories.schema.json).
//
//   {"module": "lib/a.o", "decisions": [1, 0, 0, 1]}
//   {"module": "lib/b.o", "decisions": [0, 1], "then": "default"}
//
// One JSON object per line, one line per module. With `then` the recorded
// decisions are a prefix, and the named policy (default or random:P:SEED)
// decides every later one: how harvest-logs --explore runs a trajectory that
// replays its parent up to a step, flips it and follows the base policy.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// A module's decisions in the order the compiler asked for them (true: inline).
using DecisionSequence = std::vector<bool>;

struct Trajectory {
  DecisionSequence Recorded;
  /// "" : exactly Recorded. Else the policy that decides after Recorded (it
  /// is also asked during Recorded, so a random stream stays in step).
  std::string Then;
};

/// module -> trajectory. A module listed twice is an error (which one would replay?).
using TrajectorySet = std::map<std::string, Trajectory>;

/// Reads a trajectories file; an error names the file, the line and what is wrong.
llvm::Expected<TrajectorySet> readTrajectories(llvm::StringRef path);

/// The trajectory `set` (read from `path`) holds for `module`, or the error
/// both replay hosts (harvester and plugin) give when it holds none.
llvm::Expected<const Trajectory *> trajectoryOf(const TrajectorySet &set, llvm::StringRef path, llvm::StringRef module);

/// Parses one line of a trajectories file; `where` ("FILE line N") begins the error.
llvm::Error parseTrajectoryLine(llvm::StringRef line, llvm::StringRef where, std::string &module,
                                Trajectory &trajectory);

/// One line of a trajectories file, '\n' included.
std::string trajectoryLine(llvm::StringRef module, const DecisionSequence &decisions, llvm::StringRef then = "");

/// Whether a compile that asked `asked` decisions followed `trajectory`
/// (exactly its length; with Then, at least its length); else why not.
std::optional<std::string> replayMismatch(llvm::StringRef module, const Trajectory &trajectory, size_t asked);

/// One module's replay as both hosts (the harvester's replay policy and the
/// plugin's) follow it: the recorded decisions in order, then the `then`
/// policy's, or an error when the compile asks for more than recorded.
class ReplayCursor {
public:
  /// Follows `module`'s trajectory in `set` (read from `path`).
  llvm::Error begin(const TrajectorySet &set, llvm::StringRef path, llvm::StringRef module);
  const Trajectory &followed() const { return *Followed; }
  const std::string &module() const { return Module; }
  /// The next step's recorded decision; past the record, nullopt when a
  /// `then` policy decides it, else the length-mismatch error.
  llvm::Expected<std::optional<bool>> next();

private:
  const Trajectory *Followed = nullptr;
  std::string Module;
  size_t Next = 0;
};

/// Why replaying `recorded` decisions failed after the compile asked for
/// `asked` (more or fewer than recorded), for the journal's detail.
std::string replayLengthMismatch(llvm::StringRef module, size_t recorded, size_t asked);

} // namespace mlgo
