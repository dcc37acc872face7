// One episode of the inliner as an environment (mlgo_corpus.InlinerEnv):
// opt runs on a module with the interactive channel, our host
// (runInteractive) answers each query with the action the caller supplies,
// and when the compile ends the module's native size is measured as a
// harvest measures it. The compile runs on a thread of its own; the caller
// steps it query by query.
#pragma once

#include "mlgo/compile/CompilerDriver.h"
#include "mlgo/log/TensorSpec.h"

#include "llvm/Support/Error.h"

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace mlgo {

struct EpisodeSettings {
  CompilerSettings Compiler; // Opt, Llc, Passes (Kind must be opt)
  double TimeoutSeconds = 60;
  /// An empty directory the episode owns: the channel FIFOs, the outputs and
  /// the compiler's stderr; removed by close().
  std::string WorkDir;
};

struct EpisodeQuery {
  std::vector<TensorSpec> Specs;    // the compiler's features, inlining_default last
  std::vector<std::string> Tensors; // their bytes, in the same order
  int64_t Index = 0;                // the observation's number
};

struct EpisodeResult {
  std::string Status; // ok, failed, timeout (closed: "closed")
  std::string Reason; // as a harvest's journal says it (compiler_failed, ...)
  std::string Detail, StderrTail;
  size_t Decisions = 0;
  std::optional<uint64_t> NativeSize;
};

class InlinerEpisode {
public:
  /// Starts opt on `bitcode`; the first query (or the end) is then waited
  /// for with next().
  static llvm::Expected<std::unique_ptr<InlinerEpisode>> start(const std::string &bitcode, EpisodeSettings settings);
  ~InlinerEpisode();
  InlinerEpisode(const InlinerEpisode &) = delete;
  InlinerEpisode &operator=(const InlinerEpisode &) = delete;

  /// Blocks until the compiler asks (the query) or the episode is over
  /// (nullopt: result() holds the outcome).
  std::optional<EpisodeQuery> next();
  /// Answers the query next() returned: 0 = do not inline, else inline.
  llvm::Error answer(int64_t decision);
  /// The outcome, once next() returned nullopt.
  const EpisodeResult &result() const { return Result; }
  /// Ends the episode now: the compile is killed if it still runs, the
  /// thread joined, the work directory removed. Idempotent.
  void close();

private:
  explicit InlinerEpisode(EpisodeSettings settings) : Settings(std::move(settings)) {}
  void run(const std::string &bitcode);
  class Host;
  friend class Host;

  EpisodeSettings Settings;
  std::thread Thread;
  std::mutex Mutex;
  std::condition_variable Changed;
  std::optional<EpisodeQuery> Pending; // asked, not answered
  std::optional<int64_t> Answer;
  bool Over = false, Closing = false, Closed = false;
  EpisodeResult Result;
};

/// The module's native size with the ordinary inliner (the reward's
/// baseline), compiled in `settings.WorkDir`.
llvm::Expected<uint64_t> defaultNativeSize(const std::string &bitcode, const EpisodeSettings &settings);

} // namespace mlgo
