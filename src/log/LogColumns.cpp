#include "mlgo/log/LogColumns.h"

#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/PathUtil.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unordered_map>

namespace mlgo {
namespace {

// The fewest bytes an observation takes in a log besides its tensors:
// {"observation":0}, a newline, and the newline after the tensors.
constexpr uint64_t MinObservationOverhead = 19;
// Without a size hint, a batch starts with room for this many observations.
constexpr size_t DefaultCapacity = 1024;

} // namespace

ColumnBuffer::~ColumnBuffer() { std::free(Data); }

ColumnBuffer::ColumnBuffer(ColumnBuffer &&other) noexcept
    : Data(std::exchange(other.Data, nullptr)), Size(std::exchange(other.Size, 0)),
      Capacity(std::exchange(other.Capacity, 0)) {}

ColumnBuffer &ColumnBuffer::operator=(ColumnBuffer &&other) noexcept {
  if (this != &other) {
    std::free(Data);
    Data = std::exchange(other.Data, nullptr);
    Size = std::exchange(other.Size, 0);
    Capacity = std::exchange(other.Capacity, 0);
  }
  return *this;
}

llvm::Error ColumnBuffer::reserve(size_t bytes) {
  if (bytes <= Capacity)
    return llvm::Error::success();
  void *grown = std::realloc(Data, bytes);
  if (!grown)
    return llvm::createStringError("out of memory: cannot hold %zu bytes of a log column", bytes);
  Data = static_cast<char *>(grown);
  Capacity = bytes;
  return llvm::Error::success();
}

llvm::Error ColumnBuffer::append(const void *data, size_t n) {
  if (n > Capacity - Size) {
    size_t want = std::max(Size + n, Capacity < 4096 ? size_t(4096) : Capacity * 2);
    if (llvm::Error e = reserve(want))
      return e;
  }
  if (n == 0)
    return llvm::Error::success();
  if (data)
    std::memcpy(Data + Size, data, n);
  else
    std::memset(Data + Size, 0, n);
  Size += n;
  return llvm::Error::success();
}

void ColumnBuffer::shrinkToFit() {
  if (Size == Capacity)
    return;
  if (Size == 0) {
    std::free(Data);
    Data = nullptr;
    Capacity = 0;
    return;
  }
  if (void *shrunk = std::realloc(Data, Size)) {
    Data = static_cast<char *>(shrunk);
    Capacity = Size;
  }
}

void *ColumnBuffer::release() {
  shrinkToFit();
  Size = Capacity = 0;
  return std::exchange(Data, nullptr);
}

llvm::Expected<std::unique_ptr<LogColumnReader>> LogColumnReader::open(llvm::StringRef path) {
  uint64_t sizeHint = 0;
  struct stat st;
  if (path != "-" && ::stat(path.str().c_str(), &st) == 0 && S_ISREG(st.st_mode))
    sizeHint = static_cast<uint64_t>(st.st_size);
  auto reader = TrainingLogReader::open(path);
  if (!reader)
    return reader.takeError();
  return std::make_unique<LogColumnReader>(std::move(*reader), sizeHint);
}

LogColumnReader::LogColumnReader(std::unique_ptr<TrainingLogReader> reader, uint64_t sizeHint)
    : Reader(std::move(reader)), SizeHint(sizeHint) {}

llvm::Expected<TrainingLogReader::Event> LogColumnReader::nextEvent() {
  if (HavePending) {
    HavePending = false;
    return Pending;
  }
  return Reader->next();
}

size_t LogColumnReader::initialCapacity(const LogHeader &header, size_t limit) const {
  size_t capacity = DefaultCapacity;
  if (SizeHint) {
    // No more observations than the file has room for: the columns together
    // take at most the file's size.
    uint64_t fit = SizeHint / (header.observationBytes() + MinObservationOverhead) + 1;
    capacity = static_cast<size_t>(std::min<uint64_t>(fit, SIZE_MAX / 2));
  }
  if (limit)
    capacity = std::min(capacity, limit);
  return capacity;
}

llvm::Expected<LogColumns> LogColumnReader::read(size_t limit) {
  LogColumns out;
  bool started = false;
  std::unordered_map<std::string, int32_t> contextIds;
  int32_t context = -1; // out.Contexts' index of the reader's context, once known
  size_t scoreBytes = 0;

  auto start = [&](const LogHeader &header) -> llvm::Error {
    out.Header = header;
    out.Features.clear();
    out.Features.resize(header.Features.size());
    scoreBytes = header.Score ? header.Score->byteSize() : 0;
    size_t capacity = initialCapacity(header, limit);
    for (size_t i = 0; i < header.Features.size(); ++i)
      if (llvm::Error e = out.Features[i].reserve(capacity * header.Features[i].byteSize()))
        return e;
    if (llvm::Error e = out.Rewards.reserve(capacity * scoreBytes))
      return e;
    out.HasReward.reserve(capacity);
    out.ContextIndex.reserve(capacity);
    out.ObservationIds.reserve(capacity);
    started = true;
    return llvm::Error::success();
  };
  auto finish = [&]() -> LogColumns {
    for (ColumnBuffer &column : out.Features)
      column.shrinkToFit();
    out.Rewards.shrinkToFit();
    return std::move(out);
  };

  // A batch that starts in the middle of a stream continues its header.
  if (Reader->streams() > 0 && !(HavePending && Pending == TrainingLogReader::Event::Header))
    if (llvm::Error e = start(Reader->header()))
      return std::move(e);

  while (true) {
    auto event = nextEvent();
    if (!event)
      return event.takeError();
    switch (*event) {
    case TrainingLogReader::Event::End:
      Done = true;
      return finish();
    case TrainingLogReader::Event::Header:
      if (started && out.Observations > 0) {
        // Streams with the same header continue the batch; another header
        // starts the next one.
        if (!(Reader->header().Features == out.Header.Features && Reader->header().Score == out.Header.Score)) {
          HavePending = true;
          Pending = *event;
          return finish();
        }
      } else if (llvm::Error e = start(Reader->header())) {
        return std::move(e);
      }
      context = -1;
      break;
    case TrainingLogReader::Event::Context:
      if (limit && out.Observations == limit) {
        HavePending = true;
        Pending = *event;
        return finish();
      }
      context = -1;
      break;
    case TrainingLogReader::Event::Observation: {
      if (limit && out.Observations == limit) {
        HavePending = true;
        Pending = *event;
        return finish();
      }
      if (context < 0) {
        auto [it, added] = contextIds.try_emplace(Reader->context(), static_cast<int32_t>(out.Contexts.size()));
        if (added)
          out.Contexts.push_back(Reader->context());
        context = it->second;
      }
      for (size_t i = 0; i < out.Features.size(); ++i) {
        llvm::StringRef bytes = Reader->feature(i);
        if (llvm::Error e = out.Features[i].append(bytes.data(), bytes.size()))
          return std::move(e);
      }
      if (llvm::Error e = out.Rewards.append(nullptr, scoreBytes))
        return std::move(e);
      out.HasReward.push_back(0);
      out.ContextIndex.push_back(context);
      out.ObservationIds.push_back(Reader->observationIndex());
      ++out.Observations;
      break;
    }
    case TrainingLogReader::Event::Outcome: {
      // The reader checked that it follows the observation just read, which
      // is in this batch: a batch ends only at the record after an outcome.
      if (out.Observations == 0)
        return llvm::createStringError("%s: an outcome without its observation", Reader->name().c_str());
      llvm::StringRef score = Reader->outcome();
      std::memcpy(out.Rewards.data() + (out.Observations - 1) * scoreBytes, score.data(), score.size());
      out.HasReward.back() = 1;
      break;
    }
    }
  }
}

namespace {

llvm::Expected<LogColumns> readWhole(LogColumnReader &reader, llvm::StringRef path) {
  auto columns = reader.read(0);
  if (!columns)
    return columns.takeError();
  if (!reader.done())
    return llvm::createStringError("%s: its streams have different headers (stream %zu differs from the first): "
                                   "read it batch by batch",
                                   path.str().c_str(), reader.streams());
  return columns;
}

} // namespace

llvm::Expected<LogColumns> readLogColumns(llvm::StringRef path) {
  auto reader = LogColumnReader::open(path);
  if (!reader)
    return reader.takeError();
  return readWhole(**reader, path);
}

llvm::Expected<std::unique_ptr<LogColumnReader>> LogColumnReader::openBeneath(llvm::StringRef root,
                                                                              llvm::StringRef relative) {
  auto fd = openRegularFileBeneath(root, relative);
  if (!fd)
    return fd.takeError();
  struct stat st;
  uint64_t sizeHint = ::fstat(fd->get(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  return std::make_unique<LogColumnReader>(
      std::make_unique<TrainingLogReader>(fd->release(), joinPath(root, relative), /*owned=*/true), sizeHint);
}

llvm::Expected<LogColumns> readLogColumnsBeneath(llvm::StringRef root, llvm::StringRef relative) {
  auto reader = LogColumnReader::openBeneath(root, relative);
  if (!reader)
    return reader.takeError();
  return readWhole(**reader, joinPath(root, relative));
}

} // namespace mlgo
