// A default-decision trace recorded through one of LLVM's ML register
// allocation advisors: the advisor computes its features and sends them over
// its interactive channel, a pair of FIFOs served by a thread of this process,
// which logs each observation with the default's decision as the action column
// (as development mode logs it) and replies that decision. Shared by the
// eviction and the priority traces; each says how its decision is encoded.
#pragma once

#include "mlgo/log/TrainingLog.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace llvm {
class LLVMContext;
}

namespace mlgo {

class ChannelTrace {
public:
  /// `channelOption`: LLVM's option naming the advisor's channel base.
  ChannelTrace(std::string path, std::string channelOption);
  virtual ~ChannelTrace();

  const std::string &path() const { return Path; }

  /// The compiled module's identifier, before prepare().
  virtual void beginModule(llvm::StringRef identifier) {}

  /// Creates the FIFOs beside the log (the compile's own work directory) and
  /// points LLVM's ML advisor at them.
  bool prepare(llvm::LLVMContext &ctx);

  /// Started just before the ML advisor's model runner opens the channel (its
  /// first advisor): LLVM opens the inbound FIFO, then the outbound one.
  void startServer();

  /// After the model runner has closed its end (its provider is gone).
  void finish();

  uint64_t answered() const { return Answered; }

  /// Writes the function's reward as the outcome of its last observation, if
  /// it had any (the others carry 0, as development mode logs them).
  void reward(float score);

  std::string serverError();

protected:
  /// Checks the channel's header (the advisor's features and advice).
  /// Returns an error message, or "".
  virtual std::string checkHeader(const TrainingLogReader &reader) = 0;
  /// The reply to the current observation: the default's decision as the
  /// advice's bytes. A decision that cannot be replied as is sets `error`
  /// and replies an acceptable one (LLVM waits for every reply).
  virtual std::string decision(const TrainingLogReader &reader, std::string &error) = 0;
  /// A policy's extra outputs, logged after the features and before the
  /// decision (as harvest-logs' interactive host logs them), and their bytes
  /// for the last decision.
  virtual std::vector<TensorSpec> loggedOutputs() const { return {}; }
  virtual llvm::StringRef loggedOutputBytes() const { return {}; }

private:
  void serve();
  bool openLog();
  void writeOutcome(float score);
  void fail(std::string message);

  std::string Path, ChannelOption, ChannelBase;
  std::unique_ptr<llvm::raw_fd_ostream> Log;
  std::optional<LogHeader> Header;
  std::unique_ptr<TrainingLogWriter> Writer;
  std::thread Server;
  std::mutex Mutex;
  std::string ServerError;
  std::string Context;
  bool OutcomePending = false;
  bool Logging = true;
  std::atomic<uint64_t> Answered{0};
};

} // namespace mlgo
