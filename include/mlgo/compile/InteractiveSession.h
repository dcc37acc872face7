// One compile with the inliner advisor on an interactive channel: the
// harvester is the host. It opens the FIFOs in the order the compiler needs
// without ever blocking on a compiler that does not open them, answers every
// query through the policy, and writes the development-mode-compatible log.
#pragma once

#include "mlgo/compile/CompileServerClient.h"
#include "mlgo/policy/Policy.h"
#include "mlgo/support/ChildProcess.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlgo {

struct CompileOutcome {
  enum class Status { Ok, Failed, Timeout, Interrupted };
  Status Result = Status::Ok;
  std::string Reason; // compiler_failed, protocol_error, policy_error, no_default_decision, ...
  std::string Detail;
  std::optional<ExitStatus> Exit;
  std::string StderrTail;
  size_t Decisions = 0, Streams = 0;
};

const char *statusName(CompileOutcome::Status status);

struct CompileJob {
  std::vector<std::string> Argv;
  std::string StderrPath;
  Deadline Until;
  double TimeoutSeconds = 0;             // for messages
  std::string WorkDir;                   // the only place the compile may write (Landlock); "" = unconfined
  std::vector<std::string> AlsoWritable; // --compiler_writable_dir
  std::optional<ReadExecRules> ReadExec; // with WorkDir: what it may read and execute (CompileConfinement.h)
  uint64_t MemoryLimitBytes = 0;         // exec'd only: SpawnOptions'; 0 = none
  /// Run by this compile server as `Tool` ("opt", "llc") instead of exec'd.
  CompileServerClient *Server = nullptr;
  std::string Tool;
  /// With Server and Tool "opt": llc's argv, run by the same child on the
  /// module opt leaves in memory (no second child reading opt's output).
  std::vector<std::string> Codegen;
};

/// What the host reads from a stream's header (the compiler's first message
/// on `.out`) before it answers any observation: the header must ask for
/// `problem`'s decision as one element; the inliner's must end with a
/// one-element inlining_default feature, an eviction header must have a
/// 33-column mask. Reason (protocol_error, no_default_decision) and Detail
/// when not; the indexes of those features when it does.
struct ChannelHeaderCheck {
  const char *Reason = nullptr; // null: the header is usable
  std::string Detail;
  std::optional<size_t> DefaultIndex; // the inliner's inlining_default
  std::optional<size_t> MaskIndex;    // eviction's mask
};
ChannelHeaderCheck checkChannelHeader(const LogHeader &header, Problem problem);

/// Runs `job` as the host of the channel `channelBase` (.in/.out FIFOs are
/// created here) for `problem`. The log is written to `log` as development
/// mode would write it, without outcomes: the compiler's features (with
/// inlining_default for the inliner), then the decision taken
/// (inlining_decision, index_to_evict or priority); context lines as the
/// compiler sends them; numbering continued across streams. Eviction
/// replies are checked against the mask before they are sent.
CompileOutcome runInteractive(const CompileJob &job, const std::string &channelBase, Problem problem, Policy &policy,
                              llvm::raw_ostream &log);

/// Runs a plain compile (no channel) under the same timeout rules.
CompileOutcome runCompile(const CompileJob &job);

} // namespace mlgo
