// Training logs (and the interactive channel's byte stream, which is the
// same format with one header per stream) through TrainingLogReader, as
// training-log, the vocab builder and the harvester read them. The input is
// read from a file, then twice in chunks split at points drawn from a hash
// of the input, and (when short) one byte per read(); a SOCK_SEQPACKET
// socket makes each chunk arrive as exactly one read().
// Contract: every way gives the same records and the same error (a clear one,
// with the byte offset); an observation's feature() slices tile
// observation(); the observation is still intact at its outcome; and a log
// read without error, written back by TrainingLogWriter, reads back equal.
#include "FuzzSupport.h"

#include "mlgo/log/TrainingLog.h"

#include "llvm/ADT/Hashing.h"

#include <algorithm>
#include <csignal>
#include <random>
#include <sys/socket.h>

namespace {

using mlgo::TrainingLogReader;
using Event = TrainingLogReader::Event;

struct Record {
  Event Kind;
  std::string Text; // header line, context name, observation or outcome bytes
  int64_t Index = -1;
  bool operator==(const Record &) const = default;
};

struct Reading {
  std::vector<Record> Records;
  std::string Error; // "" when the log read to its end
  bool operator==(const Reading &) const = default;
};

Reading readAll(TrainingLogReader &reader) {
  Reading r;
  while (true) {
    auto event = reader.next();
    if (!event) {
      r.Error = FUZZ_ERROR_MESSAGE(event.takeError(), reader.name());
      FUZZ_CHECK(r.Error.find(": at byte ") != std::string::npos, "an error without its offset: " + r.Error);
      return r;
    }
    switch (*event) {
    case Event::End:
      return r;
    case Event::Header:
      r.Records.push_back({*event, reader.header().toLine()});
      break;
    case Event::Context:
      r.Records.push_back({*event, reader.context()});
      break;
    case Event::Observation: {
      std::string tiled;
      for (size_t i = 0; i < reader.header().Features.size(); ++i)
        tiled += reader.feature(i).str();
      FUZZ_CHECK(tiled == reader.observation(), "the features do not tile the observation");
      r.Records.push_back({*event, reader.observation().str(), reader.observationIndex()});
      break;
    }
    case Event::Outcome:
      FUZZ_CHECK(!r.Records.empty() && r.Records.back().Kind == Event::Observation, "an outcome out of place");
      FUZZ_CHECK(reader.observation() == r.Records.back().Text, "the observation changed by its outcome");
      r.Records.push_back({*event, reader.outcome().str(), reader.observationIndex()});
      break;
    }
  }
}

// Delivers `bytes` in the given chunks, each arriving as exactly one read():
// every chunk is queued on a SOCK_SEQPACKET socket before reading starts, so
// there is no writer thread to wait for (the kernel queues only a few
// messages per socket, hence the few chunks per reading).
constexpr size_t MaxChunks = 8;
Reading readChunked(llvm::StringRef bytes, const std::vector<size_t> &chunks, const std::string &name) {
  int fds[2];
  FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0, "socketpair failed");
  int sndbuf = 1 << 20;
  ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
  size_t at = 0;
  for (size_t c : chunks) {
    ssize_t n = ::send(fds[1], bytes.data() + at, c, MSG_DONTWAIT);
    FUZZ_CHECK(n == static_cast<ssize_t>(c), "cannot queue chunk of " + std::to_string(c) + " bytes");
    at += c;
  }
  ::close(fds[1]);
  TrainingLogReader reader(fds[0], name, /*owned=*/true);
  return readAll(reader);
}

// Split points from a hash of the input: about half just before, at or after
// a newline (where records meet), the rest anywhere.
std::vector<size_t> chunkPlan(llvm::StringRef bytes, uint32_t seed) {
  std::minstd_rand random(seed);
  std::vector<size_t> newlines;
  for (size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] == '\n')
      newlines.push_back(i);
  std::vector<size_t> cuts{0, bytes.size()};
  for (size_t i = 0; i + 1 < MaxChunks && bytes.size() > 1; ++i) {
    size_t cut = random() % bytes.size();
    if (!newlines.empty() && random() % 2)
      cut = std::min(bytes.size(), newlines[random() % newlines.size()] + random() % 3);
    cuts.push_back(cut);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<size_t> chunks;
  for (size_t i = 1; i < cuts.size(); ++i)
    chunks.push_back(cuts[i] - cuts[i - 1]);
  return chunks;
}

std::string writeBack(const Reading &r) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::unique_ptr<mlgo::TrainingLogWriter> writer;
  for (const Record &rec : r.Records) {
    switch (rec.Kind) {
    case Event::Header: {
      auto header = mlgo::LogHeader::fromLine(rec.Text);
      if (!header)
        FUZZ_CHECK(false, "our own header line does not parse: " + llvm::toString(header.takeError()));
      writer = std::make_unique<mlgo::TrainingLogWriter>(os, std::move(*header));
      break;
    }
    case Event::Context:
      writer->switchContext(rec.Text);
      break;
    case Event::Observation:
      if (llvm::Error e = writer->observationRaw({llvm::StringRef(rec.Text)}))
        FUZZ_CHECK(false, "the writer refuses an observation the reader accepted: " + llvm::toString(std::move(e)));
      break;
    case Event::Outcome:
      if (llvm::Error e = writer->outcome(rec.Text))
        FUZZ_CHECK(false, "the writer refuses an outcome the reader accepted: " + llvm::toString(std::move(e)));
      break;
    case Event::End:
      break;
    }
  }
  os.flush();
  return text;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ::signal(SIGPIPE, SIG_IGN); // a writer whose reader stopped gets EPIPE instead
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  std::string path = mlgo::fuzz::writeScratch("training.log", data, size);

  auto fileReader = TrainingLogReader::open(path);
  if (!fileReader)
    FUZZ_CHECK(false, llvm::toString(fileReader.takeError()));
  Reading whole = readAll(**fileReader);

  uint32_t seed = static_cast<uint32_t>(llvm::hash_value(bytes));
  for (uint32_t round = 0; round < 2; ++round)
    FUZZ_CHECK(readChunked(bytes, chunkPlan(bytes, seed + round), path) == whole, "chunked reading differs");
  if (size <= 256) // every split point at once; the socket holds that many one-byte messages
    FUZZ_CHECK(readChunked(bytes, std::vector<size_t>(size, 1), path) == whole, "byte-at-a-time reading differs");

  if (whole.Error.empty()) {
    std::string again = writeBack(whole);
    std::string againPath =
        mlgo::fuzz::writeScratch("again.log", reinterpret_cast<const uint8_t *>(again.data()), again.size());
    auto reader = TrainingLogReader::open(againPath);
    if (!reader)
      FUZZ_CHECK(false, llvm::toString(reader.takeError()));
    Reading reread = readAll(**reader);
    FUZZ_CHECK(reread.Error.empty(), "our own log does not read back: " + reread.Error);
    FUZZ_CHECK(reread.Records == whole.Records, "the records differ after a round trip");
  }
  return 0;
}
