#include "mlgo/log/TrainingLog.h"
#include "mlgo/log/LogDataset.h"
#include "mlgo/log/SequenceExample.h"
#include "mlgo/log/TFRecord.h"
#include "mlgo/log/Vocab.h"

#include "support/TensorBytes.h"
#include "support/TestSupport.h"

#include "llvm/Support/JSON.h"

#include <cstring>
#include <random>
#include <thread>
#include <unistd.h>

using namespace mlgo;
using namespace mlgo::test;

namespace {

std::string hex(llvm::StringRef bytes) {
  std::string out;
  char buf[3];
  for (unsigned char c : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out;
}

TEST(TensorSpec, JsonMatchesLLVM) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os);
  spec("sroa_savings", ElementType::Int64).toJson(json);
  os.flush();
  EXPECT_EQ(text, R"({"name":"sroa_savings","type":"int64_t","port":0,"shape":[1]})");
  auto parsed = TensorSpec::fromJson(nlohmann::json::parse(R"({"shape":[1,33],"port":0,"type":"float","name":"x"})"));
  ASSERT_TRUE(static_cast<bool>(parsed));
  EXPECT_EQ(parsed->elementCount(), 33u);
  EXPECT_EQ(parsed->byteSize(), 132u);
  auto unknown = TensorSpec::fromJson(nlohmann::json::parse(R"({"name":"x","type":"half","port":0,"shape":[1]})"));
  ASSERT_FALSE(static_cast<bool>(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError()).find("unknown type 'half'"), std::string::npos);
  auto missing = TensorSpec::fromJson(nlohmann::json::parse(R"({"name":"x","type":"float","shape":[1]})"));
  EXPECT_FALSE(static_cast<bool>(missing));
  llvm::consumeError(missing.takeError());
}

TEST(TrainingLogWriter, PriorityHeaderGoldenBytes) {
  // training-log-protocol.md section 5: the 246-byte priority header.
  LogHeader header;
  header.Features = {spec("li_size", ElementType::Int64), spec("stage", ElementType::Int64),
                     spec("weight", ElementType::Float)};
  header.Advice = spec("priority", ElementType::Float);
  std::string expected =
      R"({"features":[{"name":"li_size","type":"int64_t","port":0,"shape":[1]},{"name":"stage","type":"int64_t","port":0,"shape":[1]},{"name":"weight","type":"float","port":0,"shape":[1]}],"advice":{"name":"priority","type":"float","port":0,"shape":[1]}})"
      "\n";
  EXPECT_EQ(header.toLine(), expected);
  EXPECT_EQ(header.toLine().size(), 246u);
  EXPECT_EQ(header.observationBytes(), 20u);
}

TEST(TrainingLogWriter, ContextEscapingAndFramingGoldenBytes) {
  LogHeader header;
  header.Features = {spec("f", ElementType::Int64)};
  header.Score = spec("reward", ElementType::Float);
  std::string text;
  llvm::raw_string_ostream os(text);
  TrainingLogWriter writer(os, header);
  size_t headerSize = header.toLine().size();
  writer.switchContext("we\"ird\\n\xc3\xa9\xff"
                       "ame");
  ASSERT_FALSE(static_cast<bool>(writer.observation({bytesOf<int64_t>({10})})));
  ASSERT_FALSE(static_cast<bool>(writer.outcome(bytesOf<float>({0.5f}))));
  os.flush();
  llvm::StringRef rest = llvm::StringRef(text).drop_front(headerSize);
  // The spec's example: invalid UTF-8 becomes U+FFFD, quote and backslash escaped.
  std::string context = "7b22636f6e74657874223a2277655c226972645c5c6ec3a9efbfbd616d65227d0a";
  EXPECT_EQ(hex(rest.take_front(context.size() / 2)), context);
  rest = rest.drop_front(context.size() / 2);
  EXPECT_EQ(rest, std::string("{\"observation\":0}\n") + bytesOf<int64_t>({10}) + "\n{\"outcome\":0}\n" +
                      bytesOf<float>({0.5f}) + "\n");
  EXPECT_TRUE(static_cast<bool>(writer.observation({"short"}))); // wrong size is refused
}

struct Pipe {
  int Read, Write;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    Read = fds[0];
    Write = fds[1];
  }
};

// Writes `text` to a pipe in random chunks of 1..maxChunk bytes, so that the
// reader sees random short reads.
std::thread feedInRandomChunks(int fd, const std::string &text, size_t maxChunk, unsigned seed) {
  return std::thread([fd, &text, maxChunk, seed] {
    std::mt19937 rng(seed);
    for (size_t off = 0; off < text.size();) {
      size_t n = std::min<size_t>(1 + rng() % maxChunk, text.size() - off);
      ssize_t w = ::write(fd, text.data() + off, n);
      if (w <= 0)
        break;
      off += static_cast<size_t>(w);
    }
    ::close(fd);
  });
}

// Each buffer size takes the reader down other paths: 1 MiB holds the whole
// log; the smaller ones grow the buffer for the header line, then refill and
// move it around records that straddle reads (pipe reads are short, random).
// The sweep over sizes puts record boundaries at every position relative to
// the buffer's end, so every branch of fill() runs.
std::vector<size_t> roundTripBufferSizes() {
  std::vector<size_t> sizes = {TrainingLogReader::DefaultBufferSize, 1, 64};
  for (size_t size = 290; size < 1500; size += 7)
    sizes.push_back(size);
  return sizes;
}

TEST(TrainingLog, RoundTripEveryTypeAndShapeThroughAPipe) {
  LogHeader header;
  std::vector<ElementType> types = {ElementType::Float, ElementType::Double, ElementType::Int8,  ElementType::UInt8,
                                    ElementType::Int16, ElementType::UInt16, ElementType::Int32, ElementType::UInt32,
                                    ElementType::Int64, ElementType::UInt64};
  for (size_t i = 0; i < types.size(); ++i) {
    header.Features.push_back(spec(std::string("scalar_") + elementTypeName(types[i]), types[i]));
    header.Features.push_back(spec(std::string("matrix_") + elementTypeName(types[i]), types[i], {2, 3}));
  }
  header.Features.push_back(spec("empty", ElementType::Int64, {0}));
  header.Score = spec("delta_size", ElementType::Int64);

  // Random tensor bytes, with plenty of 0x0a among them.
  std::mt19937 rng(7);
  std::vector<std::vector<std::string>> written;
  std::vector<std::string> contexts = {"main", "f\n", "main", ""};
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    TrainingLogWriter writer(os, header);
    for (const std::string &context : contexts) {
      writer.switchContext(context);
      for (int obs = 0; obs < 3; ++obs) {
        std::vector<std::string> tensors;
        for (const TensorSpec &s : header.Features) {
          std::string t(s.byteSize(), '\0');
          for (char &c : t)
            c = static_cast<char>(rng() % 3 == 0 ? '\n' : rng());
          tensors.push_back(t);
        }
        std::vector<llvm::StringRef> refs(tensors.begin(), tensors.end());
        ASSERT_FALSE(static_cast<bool>(writer.observation(refs)));
        ASSERT_FALSE(static_cast<bool>(writer.outcome(bytesOf<int64_t>({obs * 100 - 1}))));
        written.push_back(std::move(tensors));
      }
    }
  }
  for (size_t bufferSize : roundTripBufferSizes()) {
    SCOPED_TRACE("buffer size " + std::to_string(bufferSize));
    Pipe pipe;
    std::thread feeder = feedInRandomChunks(pipe.Write, text, 777, static_cast<unsigned>(bufferSize));
    TrainingLogReader reader(pipe.Read, "pipe", false, bufferSize);
    size_t observation = 0;
    std::vector<std::string> seenContexts;
    std::vector<int64_t> indices;
    auto readAll = [&] {
      while (true) {
        auto event = reader.next();
        ASSERT_TRUE(static_cast<bool>(event)) << llvm::toString(event.takeError());
        if (*event == TrainingLogReader::Event::End)
          break;
        if (*event == TrainingLogReader::Event::Header) {
          EXPECT_EQ(reader.header().toLine(), header.toLine());
        }
        if (*event == TrainingLogReader::Event::Context)
          seenContexts.push_back(reader.context());
        if (*event == TrainingLogReader::Event::Observation) {
          ASSERT_LT(observation, written.size());
          for (size_t f = 0; f < header.Features.size(); ++f)
            ASSERT_EQ(reader.feature(f).str(), written[observation][f])
                << "observation " << observation << " feature " << f;
          indices.push_back(reader.observationIndex());
          ++observation;
        }
        if (*event == TrainingLogReader::Event::Outcome) {
          EXPECT_EQ(header.Score->elementAsInt(reader.outcome(), 0), reader.observationIndex() % 3 * 100 - 1);
          // The observation is still readable at its outcome.
          for (size_t f = 0; f < header.Features.size(); ++f)
            ASSERT_EQ(reader.feature(f).str(), written[observation - 1][f])
                << "observation " << observation - 1 << " feature " << f << " at its outcome";
        }
      }
    };
    readAll();
    ::close(pipe.Read); // also when readAll stopped early: the feeder must not block
    feeder.join();
    EXPECT_EQ(observation, written.size());
    EXPECT_EQ(seenContexts, contexts);
    // Numbering continues when a context comes back.
    EXPECT_EQ(indices, (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 3, 4, 5, 0, 1, 2}));
    EXPECT_EQ(reader.offset(), text.size());
    if (HasFailure())
      break;
  }
}

// Issue 16, defect 6: at an outcome record the reader used to refill its
// buffer before copying the observation out. Logs far larger than the
// buffer, arriving in random short reads, with context names longer than the
// buffer (the grow path), check every observation at its outcome and at the
// context line after it.
TEST(TrainingLogReader, ObservationSurvivesRefillMoveAndGrow) {
  LogHeader header;
  header.Features = {spec("a", ElementType::Int64, {5}), spec("b", ElementType::Float, {1, 7}),
                     spec("c", ElementType::UInt8, {3})};
  header.Score = spec("reward", ElementType::Float);
  std::mt19937 rng(11);
  std::vector<std::string> observations;
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    TrainingLogWriter writer(os, header);
    for (int context = 0; context < 40; ++context) {
      writer.switchContext("function_" + std::string(rng() % 300, 'x') + std::to_string(context));
      for (int i = 0, n = 1 + rng() % 30; i < n; ++i) {
        std::string bytes(header.observationBytes(), '\0');
        for (char &c : bytes)
          c = static_cast<char>(rng() % 4 == 0 ? '\n' : rng());
        ASSERT_FALSE(static_cast<bool>(writer.observationRaw({bytes})));
        ASSERT_FALSE(static_cast<bool>(writer.outcome(bytesOf<float>({static_cast<float>(i)}))));
        observations.push_back(bytes);
      }
    }
  }
  ASSERT_GT(text.size(), size_t(50000));
  for (size_t bufferSize : {size_t(1), size_t(16), size_t(61), size_t(200), size_t(4096)}) {
    SCOPED_TRACE("buffer size " + std::to_string(bufferSize));
    Pipe pipe;
    std::thread feeder = feedInRandomChunks(pipe.Write, text, 97, static_cast<unsigned>(bufferSize));
    TrainingLogReader reader(pipe.Read, "pipe", false, bufferSize);
    size_t seen = 0, checked = 0;
    while (true) {
      auto event = reader.next();
      if (!event) {
        ADD_FAILURE() << llvm::toString(event.takeError());
        break;
      }
      if (*event == TrainingLogReader::Event::End)
        break;
      if (*event == TrainingLogReader::Event::Observation)
        ++seen;
      if (seen == 0 || *event == TrainingLogReader::Event::Header)
        continue;
      // At the observation, its outcome and the next context line alike.
      if (hex(reader.observation()) != hex(observations[seen - 1])) {
        ADD_FAILURE() << "observation " << seen - 1 << " changed at a "
                      << (*event == TrainingLogReader::Event::Outcome ? "outcome" : "later") << " event";
        break;
      }
      ++checked;
    }
    ::close(pipe.Read); // a reader that stopped early must not leave the feeder blocked
    feeder.join();
    EXPECT_EQ(seen, observations.size());
    EXPECT_GT(checked, 2 * observations.size());
    EXPECT_EQ(reader.offset(), text.size());
  }
}

std::string readError(const std::string &text) {
  TempDir dir;
  writeFile(dir / "log", text);
  auto reader = TrainingLogReader::open(dir / "log");
  if (!reader)
    return llvm::toString(reader.takeError());
  while (true) {
    auto event = (*reader)->next();
    if (!event)
      return llvm::toString(event.takeError());
    if (*event == TrainingLogReader::Event::End)
      return "";
  }
}

const std::string Header = R"({"features":[{"name":"a","type":"int64_t","port":0,"shape":[2]}]})"
                           "\n";
const std::string Obs0 = std::string("{\"observation\":0}\n") + std::string(16, '\n') + "\n";

TEST(TrainingLogReader, AcceptsAWellFormedLog) {
  EXPECT_EQ(readError(Header + "{\"context\":\"\"}\n" + Obs0), "");
  EXPECT_EQ(readError(Header + "{\"context\":\"\"}\n" + Header + "{\"context\":\"\"}\n" + Obs0), ""); // 2 streams
}

TEST(TrainingLogReader, RejectsMalformedInputWithOffset) {
  std::string ctx = "{\"context\":\"\"}\n";
  struct Case {
    std::string Text, Expected;
  } cases[] = {
      {"", "empty input"},
      {Header + ctx + Obs0.substr(0, 30), "at byte " + std::to_string(Header.size() + ctx.size() + 18) +
                                              ": truncated observation 0 tensors: expected 16 bytes, got 12"},
      {Header + ctx + "{\"observation\":0}\n" + std::string(16, 'x') + "y",
       "expected a newline after the 16 bytes of observation 0 tensors, found byte 0x79"},
      {Header + ctx + "{\"observ", "truncated JSON line"},
      {Header + ctx + "{not json}\n", "at byte " + std::to_string(Header.size() + ctx.size()) + ": bad JSON line"},
      {R"({"features":[{"name":"a","type":"bfloat16","port":0,"shape":[1]}]})"
       "\n",
       "unknown type 'bfloat16'"},
      {Header + ctx + Obs0 + "{\"observation\":2}\n", "observation number 2 out of order in context '': expected 1"},
      {Header + Obs0, "observation 0 before any context line"},
      {Header + ctx + Obs0 + "{\"outcome\":0}\n", "the header declares no score"},
      {ctx, "expected the header line"},
      {Header + "{\"something\":1}\n", "unexpected JSON line"},
  };
  for (const Case &c : cases) {
    std::string error = readError(c.Text);
    EXPECT_NE(error.find(c.Expected), std::string::npos) << "got: " << error << "\nexpected: " << c.Expected;
    if (!c.Text.empty()) {
      EXPECT_NE(error.find("at byte "), std::string::npos) << error;
    }
  }
}

// Issue 16, defect 4: tensor sizes from a hostile header. [2^62] int64 used
// to wrap to 0 bytes; [10^12] threw std::bad_alloc.
TEST(TrainingLogReader, RejectsHeadersWithHugeTensors) {
  auto headerWith = [](const std::string &features) { return "{\"features\":[" + features + "]}\n"; };
  auto tensor = [](const std::string &type, const std::string &shape) {
    return R"({"name":"t","type":")" + type + R"(","port":0,"shape":)" + shape + "}";
  };
  std::string ctx = "{\"context\":\"\"}\n{\"observation\":0}\n\n";
  struct Case {
    std::string Text, Expected;
  } cases[] = {
      {headerWith(tensor("int64_t", "[4611686018427387904]")) + ctx, "is larger than the limit"},
      {headerWith(tensor("int64_t", "[2305843009213693952,8]")) + ctx, "is larger than the limit"},
      {headerWith(tensor("float", "[1000000000000]")) + ctx, "is larger than the limit"},
      {headerWith(tensor("uint8_t", "[65536,65536,65536,65536,0]")) + ctx, "is larger than the limit"},
      {headerWith(tensor("int64_t", "[18446744073709551615]")), "bad shape"},
      {headerWith(tensor("int64_t", "[33554432]") + "," + tensor("int64_t", "[33554432]")) + ctx,
       "more than the limit of 268435456 bytes per observation"},
  };
  for (const Case &c : cases) {
    std::string error = readError(c.Text);
    EXPECT_NE(error.find("at byte 0: "), std::string::npos) << error;
    EXPECT_NE(error.find(c.Expected), std::string::npos) << "got: " << error << "\nexpected: " << c.Expected;
  }
  // At the limit is fine: a zero dimension, and one tensor of exactly 256 MiB declared (not read).
  EXPECT_EQ(readError(headerWith(tensor("int64_t", "[0,4611686018427387904]")) + "{\"context\":\"\"}\n" +
                      "{\"observation\":0}\n\n"),
            "");
  auto exact = TensorSpec::fromJson(nlohmann::json::parse(tensor("int64_t", "[33554432]")));
  ASSERT_TRUE(static_cast<bool>(exact));
  EXPECT_EQ(exact->byteSize(), MaxTensorBytes);
}

TEST(TFRecord, Crc32cVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(std::string(8, '\0')), 0x8C28B28Au);
  EXPECT_EQ(maskCrc(0x8C28B28Au), 0x07980329u);
  EXPECT_EQ(maskCrc(0), 0xA282EAD8u);
  EXPECT_EQ(crc32c(""), 0u);
  // RFC 3720 test vectors: 32 bytes of zeros, of 0xff, and ascending.
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i)
    ascending += static_cast<char>(i);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
}

std::string specExamplePayload() {
  SequenceExampleBuilder b;
  size_t decision = b.list("inlining_decision", SequenceExampleBuilder::Kind::Int64);
  size_t reward = b.list("reward", SequenceExampleBuilder::Kind::Float);
  b.appendInt64(decision, {1});
  b.appendFloat(reward, {0.0f});
  b.appendInt64(decision, {0});
  b.appendFloat(reward, {0.0f});
  return b.serialize();
}

TEST(SequenceExample, SpecExampleBytes) {
  // default-trace-dataset.md 3.3.
  EXPECT_EQ(hex(specExamplePayload()), "1245"
                                       "0a23"
                                       "0a11696e6c696e696e675f6465636973696f6e"
                                       "120e"
                                       "0a051a030a0101"
                                       "0a051a030a0100"
                                       "0a1e"
                                       "0a06726577617264"
                                       "1214"
                                       "0a0812060a0400000000"
                                       "0a0812060a0400000000");
  EXPECT_EQ(specExamplePayload().size(), 71u);
}

TEST(SequenceExample, NegativeIntsAndFloatLists) {
  std::string varint;
  appendVarint(varint, static_cast<uint64_t>(int64_t(-40)));
  EXPECT_EQ(hex(varint), "d8ffffffffffffffff01");
  SequenceExampleBuilder b;
  size_t f = b.list("f", SequenceExampleBuilder::Kind::Float);
  b.appendFloat(f, {0.5f, 1.0f});
  EXPECT_NE(hex(b.serialize()).find("120a0a080000003f0000803f"), std::string::npos);
  SequenceExampleBuilder e;
  e.appendInt64(e.list("empty", SequenceExampleBuilder::Kind::Int64), {});
  EXPECT_NE(hex(e.serialize()).find("0a021a00"), std::string::npos); // 1a 00: an empty int64_list
}

TEST(TFRecord, FramingGoldenBytesAndChecks) {
  std::string empty;
  appendTFRecord(empty, "");
  EXPECT_EQ(hex(empty), "0000000000000000"
                        "29039807"
                        "d8ea82a2");
  std::string record;
  appendTFRecord(record, specExamplePayload());
  EXPECT_EQ(hex(record.substr(0, 12)), "4700000000000000"
                                       "bac3fb9b");
  EXPECT_EQ(hex(record.substr(record.size() - 4)), "204969ae");
  auto back = readTFRecords(empty + record);
  ASSERT_TRUE(static_cast<bool>(back));
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[1], specExamplePayload());
  std::string corrupt = record;
  corrupt[20] ^= 1;
  auto bad = readTFRecords(empty + corrupt);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("record 1 at byte 16: bad payload CRC"), std::string::npos);
  auto cut = readTFRecords(record.substr(0, record.size() - 1));
  ASSERT_FALSE(static_cast<bool>(cut));
  EXPECT_NE(llvm::toString(cut.takeError()).find("truncated"), std::string::npos);
}

// A length near 2^64 must not wrap the bounds check around: the record is
// truncated, whatever CRC its header carries.
TEST(TFRecord, HugeLengthIsTruncatedNotWrapped) {
  for (uint64_t length : {~uint64_t(0) - 3, ~uint64_t(0) - 1, ~uint64_t(0)}) {
    std::string header(8, '\0');
    for (int i = 0; i < 8; ++i)
      header[i] = static_cast<char>(length >> (8 * i));
    uint32_t crc = maskCrc(crc32c(header));
    std::string file = header;
    for (int i = 0; i < 4; ++i)
      file += static_cast<char>(crc >> (8 * i));
    file += std::string(16, 'x');
    auto records = readTFRecords(file);
    ASSERT_FALSE(static_cast<bool>(records)) << length;
    EXPECT_NE(llvm::toString(records.takeError()).find("truncated payload"), std::string::npos) << length;
  }
}

TEST(Vocab, PythonFloatRepr) {
  EXPECT_EQ(pythonFloatRepr(0.0), "0.0");
  EXPECT_EQ(pythonFloatRepr(-0.0), "-0.0");
  EXPECT_EQ(pythonFloatRepr(-40.0), "-40.0");
  EXPECT_EQ(pythonFloatRepr(25.0), "25.0");
  EXPECT_EQ(pythonFloatRepr(1e-05), "1e-05");
  EXPECT_EQ(pythonFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(pythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(pythonFloatRepr(1.5e16), "1.5e+16");
  EXPECT_EQ(pythonFloatRepr(9999999999999998.0), "9999999999999998.0");
  EXPECT_EQ(pythonFloatRepr(1.0 / 3.0 + 1), "1.3333333333333333");
  EXPECT_EQ(pythonFloatRepr(0.1), "0.1");
  EXPECT_EQ(pythonFloatRepr(123.456), "123.456");
  EXPECT_EQ(pythonFloatRepr(12.345600128173828), "12.345600128173828");
  EXPECT_EQ(pythonFloatRepr(1e300 * 1e300), "inf");
  EXPECT_EQ(pythonFloatRepr(-1e300 * 1e300), "-inf");
  EXPECT_EQ(pythonFloatRepr(std::nan("")), "nan");
}

std::map<double, uint64_t> histogram(std::initializer_list<double> values) {
  std::map<double, uint64_t> h;
  for (double v : values)
    ++h[v];
  return h;
}

TEST(Vocab, QuantilesMatchNumpyLinear) {
  // np.quantile(values, np.linspace(0, 1, N)) computed by hand.
  EXPECT_EQ(histogramQuantiles(histogram({1, 2, 3, 4}), 3), (std::vector<double>{1, 2.5, 4}));
  EXPECT_EQ(histogramQuantiles(histogram({0, 10}), 5), (std::vector<double>{0, 2.5, 5, 7.5, 10}));
  EXPECT_EQ(histogramQuantiles(histogram({5, 5, 5, 1}), 2), (std::vector<double>{1, 5}));
  std::vector<double> thirds = histogramQuantiles(histogram({1, 2}), 4);
  EXPECT_EQ(pythonFloatRepr(thirds[1]), "1.3333333333333333");
  EXPECT_EQ(pythonFloatRepr(thirds[2]), "1.6666666666666665"); // numpy 1.24 prints the same
  // np.quantile([-40, 0, 25, 3, 3, 7], np.linspace(0, 1, 7)), from numpy 1.24.
  std::vector<std::string> numpy = {
      "-40.0", "-6.66666666666667", "1.9999999999999996", "3.0", "4.333333333333332", "9.99999999999999", "25.0"};
  std::vector<std::string> ours;
  for (double q : histogramQuantiles(histogram({-40, 0, 25, 3, 3, 7}), 7))
    ours.push_back(pythonFloatRepr(q));
  EXPECT_EQ(ours, numpy);
  EXPECT_EQ(histogramQuantiles(histogram({-40, 0, 25}), 1000).size(), 1000u);
  EXPECT_TRUE(histogramQuantiles({}, 10).empty());
}

TEST(LogDataset, InlinerLogBecomesOneRecord) {
  LogHeader header;
  header.Features = {spec("callee_users", ElementType::Int64), spec("inlining_default", ElementType::Int64),
                     spec("inlining_decision", ElementType::Int64)};
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    TrainingLogWriter writer(os, header);
    writer.switchContext("");
    for (int64_t i = 0; i < 3; ++i) {
      std::string a = bytesOf<int64_t>({i + 7}), d = bytesOf<int64_t>({i % 2});
      ASSERT_FALSE(static_cast<bool>(writer.observation({a, d, d})));
    }
  }
  TempDir dir;
  writeFile(dir / "m.log", text);
  auto reader = TrainingLogReader::open(dir / "m.log");
  ASSERT_TRUE(static_cast<bool>(reader));
  auto records = logToSequenceExamples(**reader, RewardPolicy{});
  ASSERT_TRUE(static_cast<bool>(records)) << llvm::toString(records.takeError());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].Key, "default");
  EXPECT_EQ((*records)[0].Steps, 3u);
  EXPECT_EQ(detectProblem(header), Problem::Inliner);
}

} // namespace
