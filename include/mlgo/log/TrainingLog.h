// LLVM's MLGO training-log format (llvm/Analysis/Utils/TrainingLogger.h):
//   HEADER (CONTEXT | OBSERVATION [OUTCOME])*
// where every record but the tensors is one compact JSON line.
#pragma once

#include "mlgo/log/TensorSpec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// The most tensor bytes one observation may hold (all features together).
constexpr uint64_t MaxObservationBytes = uint64_t(1) << 28;

struct LogHeader {
  std::vector<TensorSpec> Features;
  std::optional<TensorSpec> Score;  // present when outcomes (rewards) are logged
  std::optional<TensorSpec> Advice; // interactive streams only: the reply type

  size_t observationBytes() const;
  /// The header line as LLVM writes it, including its newline.
  std::string toLine() const;
  /// Rejects headers whose observation would exceed MaxObservationBytes.
  static llvm::Expected<LogHeader> fromLine(llvm::StringRef line);
  /// The index of the feature called `name`, if any.
  std::optional<size_t> find(llvm::StringRef name) const;
};

/// Streams a log from a file or pipe. Only the current observation is held
/// in memory; tensor bytes are read by exact count (they may contain
/// newlines). Errors carry the byte offset and what was expected.
class TrainingLogReader {
public:
  enum class Event { Header, Context, Observation, Outcome, End };

  /// `path` "-" reads standard input.
  static llvm::Expected<std::unique_ptr<TrainingLogReader>> open(llvm::StringRef path);
  static constexpr size_t DefaultBufferSize = 1 << 20;

  /// Reads from `fd`; closes it on destruction when `owned`. The buffer
  /// starts at `bufferSize` bytes and grows for longer JSON lines.
  TrainingLogReader(int fd, std::string name, bool owned, size_t bufferSize = DefaultBufferSize);
  ~TrainingLogReader();
  TrainingLogReader(const TrainingLogReader &) = delete;
  TrainingLogReader &operator=(const TrainingLogReader &) = delete;

  /// The next record. A Header event starts each stream (interactive
  /// channels may carry several). End is returned once, at a clean EOF.
  llvm::Expected<Event> next();

  const LogHeader &header() const { return Header; }
  const std::string &context() const { return Context; }
  /// The number of the current observation (or of the outcome just read).
  int64_t observationIndex() const { return Index; }
  /// Feature `i` of the current observation, raw native-endian bytes. The
  /// observation's bytes stay valid until the next Observation or Header
  /// event, also across the Outcome and Context events that follow it: the
  /// reader copies them out before it refills, moves or grows its buffer.
  llvm::StringRef feature(size_t i) const {
    return llvm::StringRef(ObservationData + Offsets[i], Header.Features[i].byteSize());
  }
  llvm::StringRef observation() const { return llvm::StringRef(ObservationData, ObservationSize); }
  /// The score bytes of the Outcome event just read; valid until the next
  /// Outcome or Header event.
  llvm::StringRef outcome() const { return llvm::StringRef(OutcomeData, Outcome.size()); }
  uint64_t offset() const { return Consumed; }
  size_t streams() const { return Streams; }
  const std::string &name() const { return Name; }

private:
  /// Reads more input; may move, grow or overwrite the buffer, so it first
  /// copies any record the accessors still point at into its scratch.
  llvm::Error fill();
  void preserve(const char *&data, std::vector<char> &scratch);
  /// The next line without its newline, valid until the next read; nullopt
  /// at a clean end of input.
  llvm::Expected<std::optional<llvm::StringRef>> readLine();
  /// Exactly `n` bytes followed by one newline; points into the buffer when
  /// they are contiguous there, else into `scratch`. `what` names them in errors.
  llvm::Expected<const char *> readRecordBytes(size_t n, std::vector<char> &scratch,
                                               const std::function<std::string()> &what);
  llvm::Error fail(uint64_t at, const llvm::Twine &message) const;

  int Fd;
  std::string Name;
  bool Owned;
  std::vector<char> Buffer;
  size_t Begin = 0, End = 0;
  bool Eof = false;
  uint64_t Consumed = 0;

  LogHeader Header;
  bool HaveHeader = false;
  size_t Streams = 0;
  std::string Context;
  std::map<std::string, int64_t> NextIndex; // per context name
  int64_t *ContextCounter = nullptr;        // NextIndex[Context]
  int64_t Index = -1;
  bool OutcomeAllowed = false;
  std::vector<size_t> Offsets;
  std::vector<char> Observation, Outcome; // scratch when a record straddles reads
  const char *ObservationData = nullptr;
  size_t ObservationSize = 0;
  const char *OutcomeData = nullptr;
};

/// Reads the log at `path` to its end, calling `visit` after every record
/// (Header, Context, Observation, Outcome) with the reader positioned on it.
/// The first error, from the file or from `visit`, stops the walk.
llvm::Error visitLog(llvm::StringRef path,
                     const std::function<llvm::Error(TrainingLogReader &, TrainingLogReader::Event)> &visit);
/// Walks `reader`'s events (or returns its error).
llvm::Error visitLogEvents(llvm::Expected<std::unique_ptr<TrainingLogReader>> reader,
                           const std::function<llvm::Error(TrainingLogReader &, TrainingLogReader::Event)> &visit);
/// The same for a log below a directory we were given (a harvest): a regular
/// file reached through no symbolic link below `root` (BeneathPath.h).
llvm::Error visitLogBeneath(llvm::StringRef root, llvm::StringRef relative,
                            const std::function<llvm::Error(TrainingLogReader &, TrainingLogReader::Event)> &visit);

/// Writes a training log byte for byte as LLVM's Logger does.
class TrainingLogWriter {
public:
  TrainingLogWriter(llvm::raw_ostream &os, LogHeader header);

  /// Starts (or returns to) a context; observation numbers continue per name.
  /// The context line is written with the context's first observation, so a
  /// context without observations leaves no line: LLVM's log_reader.py and
  /// readers built like it expect an observation after every context line.
  void switchContext(llvm::StringRef name);
  /// Writes one observation: `tensors` in header order, each of its spec's size.
  llvm::Error observation(llvm::ArrayRef<llvm::StringRef> tensors);
  /// Writes one observation given as consecutive pieces of its tensor bytes
  /// (e.g. a compiler's features, then the decision).
  llvm::Error observationRaw(llvm::ArrayRef<llvm::StringRef> pieces);
  /// Writes the outcome (score bytes) of the last observation.
  llvm::Error outcome(llvm::StringRef score);
  const LogHeader &header() const { return Header; }
  /// Writes `{"context":"<name>"}` and a newline, escaped as LLVM does.
  static void contextLine(llvm::raw_ostream &os, llvm::StringRef name);

private:
  llvm::raw_ostream &OS;
  LogHeader Header;
  void startObservation();

  std::string Context;
  bool ContextPending = false; // switchContext called, line not yet written
  std::map<std::string, int64_t> NextIndex;
  int64_t Last = -1;
  size_t ObservationBytes = 0;
};

} // namespace mlgo
