#include "mlgo/log/LogColumns.h"
#include "mlgo/log/SequenceExample.h"
#include "mlgo/log/SequenceExampleReader.h"

#include "support/TensorBytes.h"
#include "support/TestSupport.h"

#include <cstring>

using namespace mlgo;
using namespace mlgo::test;

namespace {

template <typename T> std::vector<T> column(const ColumnBuffer &buffer) {
  std::vector<T> values(buffer.size() / sizeof(T));
  if (!values.empty())
    std::memcpy(values.data(), buffer.data(), buffer.size());
  return values;
}

// Two contexts, the second revisited, a float [2] feature, an int64 decision
// and a float score on some observations only.
std::string regallocLikeLog() {
  LogHeader header;
  header.Features = {spec("weights", ElementType::Float, {2}), spec("index_to_evict", ElementType::Int64)};
  header.Score = spec("reward", ElementType::Float);
  std::string text;
  llvm::raw_string_ostream os(text);
  TrainingLogWriter writer(os, header);
  writer.switchContext("f");
  EXPECT_FALSE(static_cast<bool>(writer.observation({bytesOf<float>({1, 2}), bytesOf<int64_t>({7})})));
  EXPECT_FALSE(static_cast<bool>(writer.observation({bytesOf<float>({3, 4}), bytesOf<int64_t>({8})})));
  EXPECT_FALSE(static_cast<bool>(writer.outcome(bytesOf<float>({0.5f}))));
  writer.switchContext("g");
  EXPECT_FALSE(static_cast<bool>(writer.observation({bytesOf<float>({5, 6}), bytesOf<int64_t>({9})})));
  writer.switchContext("f");
  EXPECT_FALSE(static_cast<bool>(writer.observation({bytesOf<float>({7, 8}), bytesOf<int64_t>({10})})));
  EXPECT_FALSE(static_cast<bool>(writer.outcome(bytesOf<float>({-1.5f}))));
  os.flush();
  return text;
}

} // namespace

TEST(LogColumns, WholeLogColumnByColumn) {
  TempDir dir;
  std::string path = dir.path() + "/a.log";
  writeFile(path, regallocLikeLog());
  auto columns = readLogColumns(path);
  ASSERT_TRUE(static_cast<bool>(columns)) << llvm::toString(columns.takeError());
  EXPECT_EQ(columns->Observations, 4u);
  EXPECT_EQ(column<float>(columns->Features[0]), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(column<int64_t>(columns->Features[1]), (std::vector<int64_t>{7, 8, 9, 10}));
  EXPECT_EQ(column<float>(columns->Rewards), (std::vector<float>{0, 0.5f, 0, -1.5f}));
  EXPECT_EQ(columns->HasReward, (std::vector<uint8_t>{0, 1, 0, 1}));
  EXPECT_EQ(columns->Contexts, (std::vector<std::string>{"f", "g"}));
  EXPECT_EQ(columns->ContextIndex, (std::vector<int32_t>{0, 0, 1, 0}));
  EXPECT_EQ(columns->ObservationIds, (std::vector<int64_t>{0, 1, 0, 2}));
}

// Every batch size gives the same observations, and an outcome always stays
// with its observation even when the batch is full.
TEST(LogColumns, BatchesNeverSplitAnObservationFromItsOutcome) {
  TempDir dir;
  std::string path = dir.path() + "/a.log";
  writeFile(path, regallocLikeLog());
  for (size_t limit : {1, 2, 3, 4, 5}) {
    auto reader = LogColumnReader::open(path);
    ASSERT_TRUE(static_cast<bool>(reader));
    std::vector<int64_t> decisions, ids;
    std::vector<float> rewards;
    std::vector<std::string> contexts;
    while (!(*reader)->done()) {
      auto batch = (*reader)->read(limit);
      ASSERT_TRUE(static_cast<bool>(batch)) << llvm::toString(batch.takeError());
      EXPECT_LE(batch->Observations, limit);
      for (int64_t d : column<int64_t>(batch->Features[1]))
        decisions.push_back(d);
      for (float r : column<float>(batch->Rewards))
        rewards.push_back(r);
      for (size_t i = 0; i < batch->Observations; ++i) {
        ids.push_back(batch->ObservationIds[i]);
        contexts.push_back(batch->Contexts[batch->ContextIndex[i]]);
      }
    }
    EXPECT_EQ(decisions, (std::vector<int64_t>{7, 8, 9, 10})) << limit;
    EXPECT_EQ(rewards, (std::vector<float>{0, 0.5f, 0, -1.5f})) << limit;
    EXPECT_EQ(ids, (std::vector<int64_t>{0, 1, 0, 2})) << limit;
    EXPECT_EQ(contexts, (std::vector<std::string>{"f", "f", "g", "f"})) << limit;
  }
}

TEST(LogColumns, StreamsWithAnotherHeaderStartANewBatchAndAreAnErrorForAWholeRead) {
  LogHeader first, second;
  first.Features = {spec("a", ElementType::Int64)};
  second.Features = {spec("a", ElementType::Int32)};
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const LogHeader *header : {&first, &first, &second}) {
    TrainingLogWriter writer(os, *header);
    writer.switchContext("m");
    std::string value(header->Features[0].byteSize(), '\1');
    EXPECT_FALSE(static_cast<bool>(writer.observation({value})));
  }
  os.flush();
  TempDir dir;
  std::string path = dir.path() + "/s.log";
  writeFile(path, text);
  auto whole = readLogColumns(path);
  ASSERT_FALSE(static_cast<bool>(whole));
  EXPECT_NE(llvm::toString(whole.takeError()).find("streams have different headers"), std::string::npos);

  auto reader = LogColumnReader::open(path);
  ASSERT_TRUE(static_cast<bool>(reader));
  auto same = (*reader)->read(0);
  ASSERT_TRUE(static_cast<bool>(same));
  EXPECT_EQ(same->Observations, 2u); // the two streams with one header
  auto other = (*reader)->read(0);
  ASSERT_TRUE(static_cast<bool>(other));
  EXPECT_EQ(other->Observations, 1u);
  EXPECT_EQ(other->Header.Features[0].Type, ElementType::Int32);
  EXPECT_TRUE((*reader)->done());
}

TEST(LogColumns, HostileLogsAreErrorsWithTheOffset) {
  TempDir dir;
  std::string good = regallocLikeLog();
  struct Case {
    std::string Text, Expected;
  } cases[] = {
      {"", "empty input"},
      {good.substr(0, good.size() - 3), "truncated"},
      {R"({"features":[{"name":"x","type":"int64_t","port":0,"shape":[1099511627776]}]})"
       "\n",
       "limit"},
      {good.substr(0, good.find("{\"observation\"")) + "{\"observation\":5}\n", "out of order"},
  };
  for (const Case &c : cases) {
    std::string path = dir.path() + "/bad.log";
    writeFile(path, c.Text);
    auto columns = readLogColumns(path);
    ASSERT_FALSE(static_cast<bool>(columns)) << c.Expected;
    std::string message = llvm::toString(columns.takeError());
    EXPECT_NE(message.find(c.Expected), std::string::npos) << message;
    EXPECT_NE(message.find("bad.log"), std::string::npos) << message;
  }
}

// A log that ends right after a context line (which LLVM's log_reader.py
// trips over) has the observations before it.
TEST(LogColumns, ALogEndingAfterAContextLineIsRead) {
  TempDir dir;
  std::string path = dir.path() + "/c.log";
  writeFile(path, regallocLikeLog() + "{\"context\":\"h\"}\n");
  auto columns = readLogColumns(path);
  ASSERT_TRUE(static_cast<bool>(columns)) << llvm::toString(columns.takeError());
  EXPECT_EQ(columns->Observations, 4u);
}

TEST(SequenceExampleReader, ReadsBackWhatTheBuilderWrites) {
  SequenceExampleBuilder builder;
  size_t ints = builder.list("inlining_decision", SequenceExampleBuilder::Kind::Int64);
  size_t floats = builder.list("reward", SequenceExampleBuilder::Kind::Float);
  builder.appendInt64(ints, {1, -2, int64_t(1) << 40});
  builder.appendInt64(ints, {});
  builder.appendFloat(floats, {0.25f});
  builder.appendFloat(floats, {-3.5f});
  auto lists = parseSequenceExample(builder.serialize());
  ASSERT_TRUE(static_cast<bool>(lists)) << llvm::toString(lists.takeError());
  ASSERT_EQ(lists->size(), 2u);
  EXPECT_EQ((*lists)[0].Key, "inlining_decision");
  EXPECT_EQ((*lists)[0].Int64Values, (std::vector<int64_t>{1, -2, int64_t(1) << 40}));
  EXPECT_EQ((*lists)[0].StepSizes, (std::vector<size_t>{3, 0}));
  EXPECT_EQ((*lists)[1].Key, "reward");
  EXPECT_EQ((*lists)[1].Kind, SequenceExampleBuilder::Kind::Float);
  EXPECT_EQ((*lists)[1].FloatValues, (std::vector<float>{0.25f, -3.5f}));
}

// ml-compiler-opt's trajectories name their module in a bytes_list.
TEST(SequenceExampleReader, ReadsBytesLists) {
  SequenceExampleBuilder builder;
  size_t names = builder.list("module_name", SequenceExampleBuilder::Kind::Bytes);
  builder.appendBytes(names, {"lib/a.o"});
  builder.appendBytes(names, {std::string("\0\xff", 2), ""});
  size_t ints = builder.list("action", SequenceExampleBuilder::Kind::Int64);
  builder.appendInt64(ints, {1});
  auto lists = parseSequenceExample(builder.serialize());
  ASSERT_TRUE(static_cast<bool>(lists)) << llvm::toString(lists.takeError());
  ASSERT_EQ(lists->size(), 2u);
  EXPECT_EQ((*lists)[0].Kind, SequenceExampleBuilder::Kind::Bytes);
  EXPECT_EQ((*lists)[0].BytesValues, (std::vector<std::string>{"lib/a.o", std::string("\0\xff", 2), ""}));
  EXPECT_EQ((*lists)[0].StepSizes, (std::vector<size_t>{1, 2}));
  // Mixed with another kind in one list: an error naming both.
  SequenceExampleBuilder mixed;
  size_t m = mixed.list("m", SequenceExampleBuilder::Kind::Bytes);
  mixed.appendBytes(m, {"x"});
  mixed.appendInt64(m, {1});
  auto bad = parseSequenceExample(mixed.serialize());
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("a int64_list step in a list of bytes_list"), std::string::npos);
}

TEST(SequenceExampleReader, MalformedPayloadsAreErrorsNeverOverreads) {
  SequenceExampleBuilder builder;
  size_t ints = builder.list("x", SequenceExampleBuilder::Kind::Int64);
  builder.appendInt64(ints, {1, 2, 3});
  std::string good = builder.serialize();
  // Every truncation is an error (each message's length runs past its end).
  for (size_t n = 1; n < good.size(); ++n) {
    auto lists = parseSequenceExample(llvm::StringRef(good).take_front(n));
    EXPECT_FALSE(static_cast<bool>(lists)) << n;
    if (!lists)
      llvm::consumeError(lists.takeError());
  }
  // A huge length.
  std::string huge = "\x12\xff\xff\xff\xff\xff\xff\xff\xff\x7f";
  auto hugeLists = parseSequenceExample(huge);
  ASSERT_FALSE(static_cast<bool>(hugeLists));
  EXPECT_NE(llvm::toString(hugeLists.takeError()).find("runs past the end"), std::string::npos);
  // A list that mixes kinds, and a repeated key.
  SequenceExampleBuilder mixed;
  size_t m = mixed.list("m", SequenceExampleBuilder::Kind::Int64);
  mixed.appendInt64(m, {1});
  mixed.appendFloat(m, {1});
  auto mixedLists = parseSequenceExample(mixed.serialize());
  ASSERT_FALSE(static_cast<bool>(mixedLists));
  EXPECT_NE(llvm::toString(mixedLists.takeError()).find("feature list 'm'"), std::string::npos);
  std::string twice = good;
  twice += good; // SequenceExample.feature_lists twice: the key "x" repeats
  auto twiceLists = parseSequenceExample(twice);
  ASSERT_FALSE(static_cast<bool>(twiceLists));
  EXPECT_NE(llvm::toString(twiceLists.takeError()).find("appears twice"), std::string::npos);
}
