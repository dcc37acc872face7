#include "mlgo/log/TrainingLog.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <unistd.h>

namespace mlgo {
namespace {

std::string jsonLine(const std::function<void(llvm::json::OStream &)> &body) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os);
  body(json);
  os.flush();
  text += '\n';
  return text;
}

std::string validUTF8(llvm::StringRef s) { return llvm::json::isUTF8(s) ? s.str() : llvm::json::fixUTF8(s); }

// Fast path for the hot record: {"observation":N} or {"outcome":N}.
std::optional<int64_t> parseCounterLine(llvm::StringRef line, llvm::StringRef key) {
  if (!line.consume_front("{\"") || !line.consume_front(key) || !line.consume_front("\":") || !line.consume_back("}"))
    return std::nullopt;
  int64_t value;
  if (line.getAsInteger(10, value))
    return std::nullopt;
  return value;
}

} // namespace

size_t LogHeader::observationBytes() const {
  size_t n = 0;
  for (const TensorSpec &spec : Features)
    n += spec.byteSize();
  return n;
}

std::optional<size_t> LogHeader::find(llvm::StringRef name) const {
  for (size_t i = 0; i < Features.size(); ++i)
    if (Features[i].Name == name)
      return i;
  return std::nullopt;
}

std::string LogHeader::toLine() const {
  return jsonLine([&](llvm::json::OStream &json) {
    json.object([&] {
      json.attributeArray("features", [&] {
        for (const TensorSpec &spec : Features)
          spec.toJson(json);
      });
      if (Score) {
        json.attributeBegin("score");
        Score->toJson(json);
        json.attributeEnd();
      }
      if (Advice) {
        json.attributeBegin("advice");
        Advice->toJson(json);
        json.attributeEnd();
      }
    });
  });
}

llvm::Expected<LogHeader> LogHeader::fromLine(llvm::StringRef line) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception &e) {
    return llvm::createStringError("bad JSON header: %s", e.what());
  }
  if (!json.is_object() || !json.contains("features") || !json["features"].is_array())
    return llvm::createStringError("the header has no \"features\" list");
  LogHeader header;
  uint64_t observationBytes = 0;
  for (const auto &f : json["features"]) {
    auto spec = TensorSpec::fromJson(f);
    if (!spec)
      return spec.takeError();
    observationBytes += spec->byteSize(); // each at most MaxTensorBytes: no overflow
    if (observationBytes > MaxObservationBytes)
      return llvm::createStringError("the features add up to more than the limit of %llu bytes per observation",
                                     static_cast<unsigned long long>(MaxObservationBytes));
    header.Features.push_back(std::move(*spec));
  }
  for (const char *key : {"score", "advice"}) {
    if (!json.contains(key))
      continue;
    auto spec = TensorSpec::fromJson(json[key]);
    if (!spec)
      return spec.takeError();
    (std::string(key) == "score" ? header.Score : header.Advice) = std::move(*spec);
  }
  return header;
}

llvm::Expected<std::unique_ptr<TrainingLogReader>> TrainingLogReader::open(llvm::StringRef path) {
  if (path == "-")
    return std::make_unique<TrainingLogReader>(0, "<stdin>", false);
  int fd = ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "%s: cannot open: %s",
                                   path.str().c_str(), std::strerror(errno));
  return std::make_unique<TrainingLogReader>(fd, path.str(), true);
}

TrainingLogReader::TrainingLogReader(int fd, std::string name, bool owned, size_t bufferSize)
    : Fd(fd), Name(std::move(name)), Owned(owned), Buffer(std::max<size_t>(bufferSize, 1)) {}

TrainingLogReader::~TrainingLogReader() {
  if (Owned && Fd >= 0)
    ::close(Fd);
}

llvm::Error TrainingLogReader::fail(uint64_t at, const llvm::Twine &message) const {
  return llvm::createStringError("%s: at byte %llu: %s", Name.c_str(), static_cast<unsigned long long>(at),
                                 message.str().c_str());
}

void TrainingLogReader::preserve(const char *&data, std::vector<char> &scratch) {
  if (data && data >= Buffer.data() && data < Buffer.data() + Buffer.size()) {
    if (!scratch.empty()) // an empty record: memcpy's pointers must not be null (UBSan)
      std::memcpy(scratch.data(), data, scratch.size());
    data = scratch.data();
  }
}

llvm::Error TrainingLogReader::fill() {
  // Every branch below may overwrite consumed bytes (reset, move, grow), and
  // the accessors may still point at them.
  preserve(ObservationData, Observation);
  preserve(OutcomeData, Outcome);
  if (Begin > 0 && Begin == End)
    Begin = End = 0;
  if (End == Buffer.size()) {
    if (Begin > 0) {
      std::memmove(Buffer.data(), Buffer.data() + Begin, End - Begin);
      End -= Begin;
      Begin = 0;
    } else {
      Buffer.resize(Buffer.size() * 2); // a very long JSON line
    }
  }
  while (true) {
    ssize_t n = ::read(Fd, Buffer.data() + End, Buffer.size() - End);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail(Consumed, "read error: " + llvm::Twine(std::strerror(errno)));
    if (n == 0)
      Eof = true;
    End += static_cast<size_t>(n);
    return llvm::Error::success();
  }
}

llvm::Expected<std::optional<llvm::StringRef>> TrainingLogReader::readLine() {
  size_t scanned = 0;
  while (true) {
    const char *start = Buffer.data() + Begin;
    const void *newline = std::memchr(start + scanned, '\n', End - Begin - scanned);
    if (newline) {
      size_t length = static_cast<const char *>(newline) - start;
      Begin += length + 1;
      Consumed += length + 1;
      return std::optional<llvm::StringRef>(llvm::StringRef(start, length));
    }
    scanned = End - Begin;
    if (Eof) {
      if (scanned == 0)
        return std::optional<llvm::StringRef>();
      return fail(Consumed, "truncated JSON line (no newline before end of input): '" +
                                llvm::StringRef(start, std::min<size_t>(scanned, 80)) + "'");
    }
    // fill() may move the data down or grow the buffer; `scanned` counts
    // from Begin, so it stays valid.
    if (llvm::Error e = fill())
      return e;
  }
}

llvm::Expected<const char *> TrainingLogReader::readRecordBytes(size_t n, std::vector<char> &scratch,
                                                                const std::function<std::string()> &what) {
  uint64_t start = Consumed;
  const char *data;
  if (End - Begin >= n + 1) {
    data = Buffer.data() + Begin; // the common case: no copy
    Begin += n;
    Consumed += n;
  } else {
    size_t got = 0;
    while (got < n) {
      if (Begin == End) {
        if (Eof)
          return fail(start,
                      "truncated " + what() + ": expected " + llvm::Twine(n) + " bytes, got " + llvm::Twine(got));
        if (llvm::Error e = fill())
          return e;
        continue;
      }
      size_t take = std::min(n - got, End - Begin);
      std::memcpy(scratch.data() + got, Buffer.data() + Begin, take);
      Begin += take;
      got += take;
      Consumed += take;
    }
    data = scratch.data();
    while (Begin == End && !Eof)
      if (llvm::Error e = fill()) // may move the buffer, but `data` is in scratch
        return e;
  }
  if (Begin == End)
    return fail(Consumed, "truncated " + what() + ": no newline after its " + llvm::Twine(n) + " bytes");
  char newline = Buffer[Begin];
  if (newline != '\n')
    return fail(Consumed, "expected a newline after the " + llvm::Twine(n) + " bytes of " + what() + ", found byte 0x" +
                              llvm::utohexstr(static_cast<unsigned char>(newline)));
  ++Begin;
  ++Consumed;
  return data;
}

llvm::Expected<TrainingLogReader::Event> TrainingLogReader::next() {
  uint64_t at = Consumed;
  auto line = readLine();
  if (!line)
    return line.takeError();
  if (!*line) {
    if (!HaveHeader)
      return fail(at, "empty input: expected a header line");
    return Event::End;
  }
  llvm::StringRef text = **line;

  if (std::optional<int64_t> n = parseCounterLine(text, "observation")) {
    if (!HaveHeader)
      return fail(at, "observation before the header");
    if (!ContextCounter)
      return fail(at, "observation " + llvm::Twine(*n) + " before any context line");
    if (*n != *ContextCounter)
      return fail(at, "observation number " + llvm::Twine(*n) + " out of order in context '" + Context +
                          "': expected " + llvm::Twine(*ContextCounter));
    ++*ContextCounter;
    Index = *n;
    ObservationData = nullptr; // the previous one is over; `Observation` is free for this one
    OutcomeData = nullptr;
    auto data = readRecordBytes(Observation.size(), Observation,
                                [&] { return "observation " + std::to_string(Index) + " tensors"; });
    if (!data)
      return data.takeError();
    ObservationData = *data;
    ObservationSize = Observation.size();
    OutcomeAllowed = true;
    return Event::Observation;
  }
  if (std::optional<int64_t> n = parseCounterLine(text, "outcome")) {
    if (!HaveHeader || !Header.Score)
      return fail(at, "outcome record, but the header declares no score");
    if (!OutcomeAllowed || *n != Index)
      return fail(at, "outcome " + llvm::Twine(*n) + " does not follow observation " + llvm::Twine(*n));
    OutcomeAllowed = false;
    OutcomeData = nullptr; // `Outcome` is free for this one
    auto data = readRecordBytes(Outcome.size(), Outcome, [&] { return "outcome " + std::to_string(Index) + " score"; });
    if (!data)
      return data.takeError();
    OutcomeData = *data;
    return Event::Outcome;
  }

  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception &e) {
    return fail(at, "bad JSON line '" + text.take_front(80) + "': " + e.what());
  }
  if (json.is_object() && json.contains("features")) {
    auto header = LogHeader::fromLine(text);
    if (!header)
      return fail(at, llvm::toString(header.takeError()));
    Header = std::move(*header);
    HaveHeader = true;
    ++Streams;
    ContextCounter = nullptr;
    NextIndex.clear();
    Offsets.clear();
    size_t offset = 0;
    for (const TensorSpec &spec : Header.Features) {
      Offsets.push_back(offset);
      offset += spec.byteSize();
    }
    ObservationData = OutcomeData = nullptr;
    ObservationSize = 0;
    Observation.assign(offset, 0);
    Outcome.assign(Header.Score ? Header.Score->byteSize() : 0, 0);
    OutcomeAllowed = false;
    return Event::Header;
  }
  if (!HaveHeader)
    return fail(at, "expected the header line ({\"features\":[...]}), found '" + text.take_front(80) + "'");
  if (json.is_object() && json.size() == 1 && json.contains("context") && json["context"].is_string()) {
    Context = json["context"].get<std::string>();
    ContextCounter = &NextIndex[Context];
    OutcomeAllowed = false;
    return Event::Context;
  }
  return fail(at, "unexpected JSON line '" + text.take_front(80) + "': expected a context, observation or outcome");
}

llvm::Error visitLogEvents(llvm::Expected<std::unique_ptr<TrainingLogReader>> reader,
                           const std::function<llvm::Error(TrainingLogReader &, TrainingLogReader::Event)> &visit) {
  if (!reader)
    return reader.takeError();
  while (true) {
    auto event = (*reader)->next();
    if (!event)
      return event.takeError();
    if (*event == TrainingLogReader::Event::End)
      return llvm::Error::success();
    if (llvm::Error e = visit(**reader, *event))
      return e;
  }
}

llvm::Error visitLog(llvm::StringRef path,
                     const std::function<llvm::Error(TrainingLogReader &, TrainingLogReader::Event)> &visit) {
  return visitLogEvents(TrainingLogReader::open(path), visit);
}

TrainingLogWriter::TrainingLogWriter(llvm::raw_ostream &os, LogHeader header)
    : OS(os), Header(std::move(header)), ObservationBytes(Header.observationBytes()) {
  OS << Header.toLine();
}

llvm::Error TrainingLogWriter::observationRaw(llvm::ArrayRef<llvm::StringRef> pieces) {
  size_t total = 0;
  for (llvm::StringRef p : pieces)
    total += p.size();
  if (total != ObservationBytes)
    return llvm::createStringError("observation has %zu tensor bytes, the header declares %zu", total,
                                   ObservationBytes);
  startObservation();
  for (llvm::StringRef p : pieces)
    OS << p;
  OS << '\n';
  return llvm::Error::success();
}

void TrainingLogWriter::contextLine(llvm::raw_ostream &os, llvm::StringRef name) {
  os << jsonLine([&](llvm::json::OStream &json) { json.object([&] { json.attribute("context", validUTF8(name)); }); });
}

void TrainingLogWriter::switchContext(llvm::StringRef name) {
  Context = name.str();
  ContextPending = true;
}

void TrainingLogWriter::startObservation() {
  if (ContextPending)
    contextLine(OS, Context);
  ContextPending = false;
  Last = NextIndex[Context]++;
  OS << "{\"observation\":" << Last << "}\n";
}

llvm::Error TrainingLogWriter::observation(llvm::ArrayRef<llvm::StringRef> tensors) {
  if (tensors.size() != Header.Features.size())
    return llvm::createStringError("observation has %zu tensors, the header declares %zu", tensors.size(),
                                   Header.Features.size());
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].size() != Header.Features[i].byteSize())
      return llvm::createStringError("tensor '%s' has %zu bytes, its spec needs %zu", Header.Features[i].Name.c_str(),
                                     tensors[i].size(), Header.Features[i].byteSize());
  startObservation();
  for (llvm::StringRef t : tensors)
    OS << t;
  OS << '\n';
  return llvm::Error::success();
}

llvm::Error TrainingLogWriter::outcome(llvm::StringRef score) {
  if (!Header.Score)
    return llvm::createStringError("the header declares no score");
  if (score.size() != Header.Score->byteSize())
    return llvm::createStringError("score has %zu bytes, its spec needs %zu", score.size(), Header.Score->byteSize());
  if (Last < 0)
    return llvm::createStringError("outcome before any observation");
  OS << "{\"outcome\":" << Last << "}\n" << score << '\n';
  return llvm::Error::success();
}

} // namespace mlgo
