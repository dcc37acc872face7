// policy/: the policies a harvest asks (spec, default, random, exec, tflite, replay); knows nothing of harvests.
// Who decides each inlining query of an interactive compile.
#pragma once

#include "mlgo/log/Problem.h"
#include "mlgo/log/TrainingLog.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

using Deadline = std::chrono::steady_clock::time_point;

/// --policy: default | random:P[:SEED] | exec:CMD | model:DIR | tflite:DIR |
/// replay:FILE, or NAME[:ARG] of a policy compiled into the inliner plugin
/// (InProcessPolicy.h).
struct PolicySpec {
  enum class Kind { Default, Random, Exec, Model, TFLite, InProcess, Replay };
  Kind How = Kind::Default;
  double Probability = 0.5;
  uint64_t Seed = 0;
  std::string Command;    // exec: run with /bin/sh -c; replay: the exec: command a `then` may name
  std::string ModelDir;   // model: and tflite:; replay: the tflite: model a `then` may name
  std::string InProcess;  // NAME[:ARG], decided inside the compiler (plugin mode)
  std::string ReplayFile; // replay: the trajectories (Trajectory.h)
  /// exec: (and replay:'s exec `then`): the policy follows each decision with
  /// its certainty, a little-endian float64 (MLGO_POLICY_CERTAINTY=1 in its
  /// environment), logged as policy_certainty (--explore_order=uncertain).
  bool ExecCertainty = false;
  std::string describe() const;
};
llvm::Expected<PolicySpec> parsePolicy(llvm::StringRef text);

/// One decision the compiler asks for.
struct Query {
  const TrainingLogReader &Observation;
  const TensorSpec &Advice;               // the reply's type and shape (from the header)
  std::optional<int64_t> DefaultDecision; // the inliner's inlining_default; regalloc sends none
  std::optional<size_t> MaskFeature;      // eviction: the index of the `mask` feature
};

/// The valid eviction columns of an observation: those whose mask is 1.
std::vector<int64_t> validEvictionColumns(const Query &query);

class Policy {
public:
  virtual ~Policy() = default;
  virtual llvm::Error beginModule(llvm::StringRef module) { return llvm::Error::success(); }
  /// Each stream the compiler opens starts with its header.
  virtual llvm::Error beginStream(const LogHeader &compilerHeader, Deadline deadline) { return llvm::Error::success(); }
  virtual llvm::Error context(llvm::StringRef name, Deadline deadline) { return llvm::Error::success(); }
  /// The reply to send: exactly Advice.byteSize() bytes (an int64 for the
  /// inliner and eviction, a float32 for priority).
  virtual llvm::Expected<std::string> decide(const Query &query, Deadline deadline) = 0;
  /// The module failed: drop any state that may be out of step.
  virtual void abandonModule() {}
  /// Plugin mode: the in-process policy spec for the module begun last when
  /// it depends on the module (replay: its trajectory, written into the
  /// module's work directory `work`); "" keeps the run's spec.
  virtual llvm::Expected<std::string> pluginPolicyForModule(const std::string &work) { return std::string(); }
  /// The module compiled, asking `decisions` decisions: an Error fails it
  /// (a replay that asked for fewer decisions than were recorded).
  virtual llvm::Error endModule(size_t decisions) { return llvm::Error::success(); }
  /// Extra tensors the policy logs with each decision (a model's extra
  /// outputs, under their logging names), and their bytes for the last one.
  virtual std::vector<TensorSpec> loggedOutputs() const { return {}; }
  virtual llvm::StringRef loggedOutputBytes() const { return {}; }
};

/// NoInference: answer with the compiler's default decision.
std::unique_ptr<Policy> makeDefaultPolicy();
/// Seeded per module (same decisions whatever the worker or the order).
/// Inliner: inline with probability P. Eviction: with probability P evict a
/// uniformly chosen valid candidate, else "no eviction" when the mask allows
/// it. Priority: a uniform integral priority in [0, 2^20).
std::unique_ptr<Policy> makeRandomPolicy(double probability, uint64_t seed);
/// The user's policy process (one per worker, reused across modules): it
/// reads the compiler's stream on stdin and answers each observation with
/// the advice's bytes on stdout (8 for int64 decisions, 4 for priority).
/// With `certainty`, the process gets MLGO_POLICY_CERTAINTY=1 and follows
/// every inlining decision with a little-endian float64, how sure it was
/// (smaller: less sure), which is logged as `policy_certainty` (float64 [1]).
std::unique_ptr<Policy> makeExecPolicy(std::string command, std::string stderrPath, bool certainty = false);
/// A TFLite policy directory (model.tflite + output_spec.json) evaluated in
/// process; loaded here, once per worker. Fails when the directory cannot
/// answer `problem`'s decisions.
/// replay:FILE: each module's decisions as recorded in FILE (Trajectory.h);
/// a module missing from FILE, or a compile asking for more or fewer
/// decisions than recorded, fails that module. A trajectory may continue
/// with tflite:DIR only when DIR is `thenModel`, and with exec:CMD only when
/// CMD is `thenExec`'s command (what the run was given: a trajectories file
/// is data, it does not choose what runs); the exec policy then writes its
/// stderr to `stderrPath`.
struct ReplayThen {
  std::string Model;      // tflite: directory a `then` may name
  PolicySpec Exec;        // the exec: policy a `then` may name (Command "" : none)
  std::string StderrPath; // the exec policy's
};
llvm::Expected<std::unique_ptr<Policy>> makeReplayPolicy(const std::string &path, const ReplayThen &then = {});
llvm::Expected<std::unique_ptr<Policy>> makeTFLitePolicy(const std::string &dir, Problem problem);

} // namespace mlgo
