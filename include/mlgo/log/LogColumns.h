// A training log read column-wise: each feature's values over many
// observations in one contiguous buffer, as array libraries (numpy, the
// Python package) want them. Tensor bytes are copied once, from the reader's
// buffer into their column; a column's memory can be handed over to its
// consumer (ColumnBuffer::release) instead of being copied again.
#pragma once

#include "mlgo/log/TrainingLog.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlgo {

/// A growable malloc'd byte buffer whose memory can be handed over (to be
/// released with std::free).
class ColumnBuffer {
public:
  ColumnBuffer() = default;
  ~ColumnBuffer();
  ColumnBuffer(ColumnBuffer &&other) noexcept;
  ColumnBuffer &operator=(ColumnBuffer &&other) noexcept;
  ColumnBuffer(const ColumnBuffer &) = delete;
  ColumnBuffer &operator=(const ColumnBuffer &) = delete;

  /// Makes room for `bytes` in all; an error when memory runs out.
  llvm::Error reserve(size_t bytes);
  /// Appends `n` bytes (zeros when `data` is null), growing as needed.
  llvm::Error append(const void *data, size_t n);
  /// Gives back unused capacity (realloc; large blocks are remapped, not copied).
  void shrinkToFit();
  const char *data() const { return Data; }
  char *data() { return Data; }
  size_t size() const { return Size; }
  /// The memory, now owned by the caller (std::free it); the buffer is empty.
  void *release();

private:
  char *Data = nullptr;
  size_t Size = 0, Capacity = 0;
};

/// Observations of one log stream (one header), column by column.
struct LogColumns {
  LogHeader Header;
  size_t Observations = 0;
  /// One buffer per header feature, in header order: Observations x byteSize().
  std::vector<ColumnBuffer> Features;
  /// With a score in the header: Observations x score byteSize(); zeros where
  /// no outcome followed the observation (HasReward tells which).
  ColumnBuffer Rewards;
  std::vector<uint8_t> HasReward;
  /// Context names in order of first appearance within these observations;
  /// ContextIndex[i] names observation i's context, ObservationIds[i] its
  /// number within that context (as the log numbers it).
  std::vector<std::string> Contexts;
  std::vector<int32_t> ContextIndex;
  std::vector<int64_t> ObservationIds;
};

/// Reads a log in batches of columns. A batch holds observations of a single
/// stream; a log with several streams (an interactive channel's capture)
/// starts a new batch at each header.
class LogColumnReader {
public:
  /// `path` "-" reads standard input.
  static llvm::Expected<std::unique_ptr<LogColumnReader>> open(llvm::StringRef path);
  /// The log `relative` below the directory `root` (a harvest), a regular
  /// file reached without following a symbolic link (support/BeneathPath.h).
  static llvm::Expected<std::unique_ptr<LogColumnReader>> openBeneath(llvm::StringRef root, llvm::StringRef relative);
  explicit LogColumnReader(std::unique_ptr<TrainingLogReader> reader, uint64_t sizeHint = 0);

  /// Up to `limit` observations (0: no limit, to the end of the stream) with
  /// the outcomes that follow them. At the end of the log, a batch with no
  /// observations and done() true. A batch never splits an observation from
  /// its outcome.
  llvm::Expected<LogColumns> read(size_t limit);
  bool done() const { return Done; }
  /// Streams (headers) seen so far.
  size_t streams() const { return Reader->streams(); }

private:
  /// Moves to the next event unless one is pending from the last batch.
  llvm::Expected<TrainingLogReader::Event> nextEvent();
  /// How many observations a batch should make room for up front.
  size_t initialCapacity(const LogHeader &header, size_t limit) const;

  std::unique_ptr<TrainingLogReader> Reader;
  uint64_t SizeHint;
  bool HavePending = false;
  TrainingLogReader::Event Pending{};
  bool Done = false;
};

/// Reads the whole log at `path` into one batch; a log whose streams have
/// different headers is an error (read it batch by batch instead). Memory is
/// bounded by the file's size, plus 13 bytes an observation for its context
/// number, observation number and reward flag.
llvm::Expected<LogColumns> readLogColumns(llvm::StringRef path);
/// The same for the log `relative` below the directory `root` (a harvest),
/// opened as a regular file without following a link in any component
/// (support/BeneathPath.h).
llvm::Expected<LogColumns> readLogColumnsBeneath(llvm::StringRef root, llvm::StringRef relative);

} // namespace mlgo
