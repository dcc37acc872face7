// Who decides each inlining query of an interactive compile.
#pragma once

#include "mlgo/log/TrainingLog.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace mlgo {

using Deadline = std::chrono::steady_clock::time_point;

/// --policy: default | random:P[:SEED] | exec:CMD | model:DIR.
struct PolicySpec {
  enum class Kind { Default, Random, Exec, Model };
  Kind How = Kind::Default;
  double Probability = 0.5;
  uint64_t Seed = 0;
  std::string Command; // exec: run with /bin/sh -c
  std::string ModelDir;
  std::string describe() const;
};
llvm::Expected<PolicySpec> parsePolicy(llvm::StringRef text);

class Policy {
public:
  virtual ~Policy() = default;
  virtual llvm::Error beginModule(llvm::StringRef module) { return llvm::Error::success(); }
  /// Each stream the compiler opens starts with its header.
  virtual llvm::Error beginStream(const LogHeader &compilerHeader, Deadline deadline) { return llvm::Error::success(); }
  virtual llvm::Error context(llvm::StringRef name, Deadline deadline) { return llvm::Error::success(); }
  /// The decision for the reader's current observation; `defaultDecision` is
  /// the compiler's own (inlining_default).
  virtual llvm::Expected<int64_t> decide(const TrainingLogReader &observation, int64_t defaultDecision,
                                         Deadline deadline) = 0;
  /// The module failed: drop any state that may be out of step.
  virtual void abandonModule() {}
};

/// NoInference: answer with the compiler's default decision.
std::unique_ptr<Policy> makeDefaultPolicy();
/// Inline with probability P, seeded per module (same decisions whatever
/// the worker or the order).
std::unique_ptr<Policy> makeRandomPolicy(double probability, uint64_t seed);
/// The user's policy process (one per worker, reused across modules): it
/// reads the compiler's stream on stdin and answers 8-byte replies on stdout.
std::unique_ptr<Policy> makeExecPolicy(std::string command, std::string stderrPath);

} // namespace mlgo
