// The one reader of harvest directories (resume, merge, dataset): records
// round-trip, and every hostile record, summary or cache is an error naming
// the file, line and field, never an exception.
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/log/DatasetFile.h"

#include "support/TestSupport.h"

#include <unistd.h>

using namespace mlgo;
using namespace mlgo::test;

namespace {

using Json = nlohmann::ordered_json;

HarvestRecord sampleRecord() {
  HarvestRecord r;
  r.Module = "dir/m1";
  r.Status = "ok";
  r.Seconds = 1.25;
  r.Decisions = 42;
  r.Streams = 2;
  r.LogWritten = true;
  r.NativeSize = 1000;
  r.DefaultSize = 1100;
  r.Reward = 0.09;
  return r;
}

std::string journalText(const std::vector<Json> &records) {
  std::string text = "{\"options\": {\"problem\": \"inliner\", \"shard\": \"0/1\"}}\n";
  for (const Json &r : records)
    text += r.dump() + "\n";
  return text;
}

std::string readError(const std::string &path) {
  auto journal = readHarvestJournal(path);
  if (journal) {
    ADD_FAILURE() << path << " was accepted";
    return "";
  }
  return llvm::toString(journal.takeError());
}

TEST(HarvestJournal, RecordsRoundTripAndTheLatestPerModuleWins) {
  TempDir dir;
  HarvestRecord a = sampleRecord(), b = sampleRecord();
  b.Module = "m2";
  b.Status = "failed";
  b.LogWritten = false;
  b.Reason = "compiler_failed";
  b.NativeSize.reset();
  b.Reward.reset();
  HarvestRecord a2 = a;
  a2.Decisions = 7;
  a2.RegallocScore = 3.5;
  writeFile(dir / "j", journalText({a.toJson(), b.toJson(), a2.toJson()}));
  auto journal = readHarvestJournal(dir / "j");
  ASSERT_TRUE(static_cast<bool>(journal)) << llvm::toString(journal.takeError());
  ASSERT_TRUE(journal->Options.has_value());
  ASSERT_EQ(journal->Latest.size(), 2u);
  EXPECT_EQ(journal->Latest[0].Record.toJson(), a2.toJson());
  EXPECT_EQ(journal->Latest[0].Text, a2.toJson().dump());
  EXPECT_EQ(journal->Latest[1].Record.toJson(), b.toJson());
  EXPECT_TRUE(journal->Latest[0].Record.hasLog());
  EXPECT_FALSE(journal->Latest[1].Record.hasLog());
  auto missing = readHarvestJournal(dir / "none");
  ASSERT_TRUE(static_cast<bool>(missing));
  EXPECT_TRUE(missing->Latest.empty());
}

TEST(HarvestJournal, EveryWrongTypedFieldIsNamedWithItsFileAndLine) {
  TempDir dir;
  const std::vector<std::pair<std::string, Json>> hostile = {
      {"module", 1},
      {"status", nullptr},
      {"reason", Json::array()},
      {"detail", 2},
      {"exit_status", true},
      {"stderr_tail", Json::object()},
      {"seconds", "1"},
      {"seconds", -1},
      {"decisions", -1},
      {"decisions", 1.5},
      {"decisions", "1"},
      {"streams", nullptr},
      {"log_written", "true"},
      {"log_written", 1},
      {"native_size", -5},
      {"native_size", 2.5},
      {"default_size", "1"},
      {"reward", true},
      {"regalloc_score", nullptr},
      {"decisions", Json::parse("18446744073709551616")}, // beyond 64 bits: a float
  };
  for (const auto &[field, value] : hostile) {
    Json bad = sampleRecord().toJson();
    bad[field] = value;
    writeFile(dir / "j", journalText({sampleRecord().toJson(), bad}));
    std::string message = readError(dir / "j");
    EXPECT_NE(message.find(dir / "j" + " line 3: field '" + field + "' is not a"), std::string::npos)
        << field << " = " << value.dump() << ": " << message;
  }
}

TEST(HarvestJournal, MissingUnknownAndContradictoryFieldsAreRefused) {
  TempDir dir;
  auto refused = [&](const std::function<void(Json &)> &edit, const std::string &expected) {
    Json bad = sampleRecord().toJson();
    edit(bad);
    writeFile(dir / "j", journalText({bad}));
    std::string message = readError(dir / "j");
    EXPECT_NE(message.find(dir / "j" + " line 2: " + expected), std::string::npos) << message;
  };
  for (const char *field : {"module", "status", "reason", "detail", "exit_status", "stderr_tail", "seconds",
                            "decisions", "streams", "log_written", "native_size", "default_size", "reward"})
    refused([&](Json &r) { r.erase(field); }, std::string("field '") + field + "' is missing");
  refused([](Json &r) { r["surprise"] = 1; }, "field 'surprise' is not a field of this file");
  refused([](Json &r) { r["status"] = "interrupted"; }, "field 'status' is \"interrupted\"");
  refused([](Json &r) { r["status"] = "timeout"; }, "field 'log_written' is true for a module whose status is timeout");
  for (const char *name : {"", "/etc/passwd", "../x", "a/../../x", "a/"})
    refused([&](Json &r) { r["module"] = name; }, "field 'module': ");
  // A record that is not an object, and a header in the wrong shape.
  writeFile(dir / "j", journalText({}) + "[1, 2]\n");
  EXPECT_NE(readError(dir / "j").find("line 2: not a JSON object"), std::string::npos);
  writeFile(dir / "j", "{\"options\": 3}\n");
  EXPECT_NE(readError(dir / "j").find("line 1: the options header is not"), std::string::npos);
}

TEST(HarvestJournal, OnlyATornLastLineIsSkipped) {
  TempDir dir;
  std::string good = journalText({sampleRecord().toJson()});
  std::string second = sampleRecord().toJson().dump();
  writeFile(dir / "j", good + second.substr(0, second.size() / 2));
  auto torn = readHarvestJournal(dir / "j");
  ASSERT_TRUE(static_cast<bool>(torn)) << llvm::toString(torn.takeError());
  EXPECT_TRUE(torn->TornTail);
  EXPECT_EQ(torn->Latest.size(), 1u);
  writeFile(dir / "j", good + second.substr(0, second.size() / 2) + "\n" + second + "\n");
  EXPECT_NE(readError(dir / "j").find("line 3: not a JSON object"), std::string::npos);
}

TEST(HarvestJournal, SummaryFieldsAreChecked) {
  TempDir dir;
  Json good = {{"shard", "1/2"},   {"problem", "inliner"},         {"compiler", "opt"},
               {"mode", "plugin"}, {"mode_reason", "x"},           {"policy", "default"},
               {"seconds", 2.5},   {"harvester_cpu_seconds", 1.0}, {"harvester_peak_rss_kb", 100}};
  writeFile(dir / "summary.json", good.dump());
  auto summary = readHarvestSummary(dir / "summary.json");
  ASSERT_TRUE(summary && *summary) << (summary ? "" : llvm::toString(summary.takeError()));
  EXPECT_EQ((*summary)->Shard, "1/2");
  EXPECT_EQ((*summary)->PeakRssKb, 100);
  EXPECT_FALSE((*summary)->Merge);
  auto none = readHarvestSummary(dir / "none.json");
  ASSERT_TRUE(none && !*none);
  for (const auto &[field, value] : std::vector<std::pair<std::string, Json>>{{"shard", 1},
                                                                              {"problem", nullptr},
                                                                              {"mode", Json::array()},
                                                                              {"seconds", "1"},
                                                                              {"harvester_peak_rss_kb", -1},
                                                                              {"merge", 1},
                                                                              {"mode_reason", 3}}) {
    Json bad = good;
    bad[field] = value;
    writeFile(dir / "summary.json", bad.dump());
    auto read = readHarvestSummary(dir / "summary.json");
    ASSERT_FALSE(static_cast<bool>(read)) << field;
    std::string message = llvm::toString(read.takeError());
    EXPECT_NE(message.find(dir / "summary.json" + ": field '" + field + "' is not a"), std::string::npos) << message;
  }
  for (const char *text : {"", "[]", "{\"shard\"", "{}"}) {
    writeFile(dir / "summary.json", text);
    auto read = readHarvestSummary(dir / "summary.json");
    ASSERT_FALSE(static_cast<bool>(read)) << text;
    EXPECT_NE(llvm::toString(read.takeError()).find(dir / "summary.json"), std::string::npos);
  }
}

TEST(HarvestJournal, SummaryConfinementListsAreReadAndCheckedAndMayBeAbsent) {
  TempDir dir;
  Json good = {
      {"shard", "0/1"},      {"problem", "inliner"}, {"compiler", "clang"},          {"mode", "plugin"},
      {"policy", "default"}, {"seconds", 1.0},       {"harvester_cpu_seconds", 1.0}, {"harvester_peak_rss_kb", 1}};
  // An earlier version's summary: no lists.
  good["confinement"] = {{"active", true}, {"landlock_abi", 7}, {"warning", ""}};
  writeFile(dir / "summary.json", good.dump());
  auto old = readHarvestSummary(dir / "summary.json");
  ASSERT_TRUE(old && *old && (*old)->Confined) << (old ? "" : llvm::toString(old.takeError()));
  EXPECT_FALSE((*old)->Confined->Readable);
  EXPECT_FALSE((*old)->Confined->Executable);

  good["confinement"]["readable"] = {"/usr/lib", "/etc/ld.so.cache"};
  good["confinement"]["executable"] = {"/usr/lib/llvm-22"};
  writeFile(dir / "summary.json", good.dump());
  auto listed = readHarvestSummary(dir / "summary.json");
  ASSERT_TRUE(listed && *listed && (*listed)->Confined) << (listed ? "" : llvm::toString(listed.takeError()));
  EXPECT_EQ((*listed)->Confined->Readable, (std::vector<std::string>{"/usr/lib", "/etc/ld.so.cache"}));
  EXPECT_EQ((*listed)->Confined->Executable, (std::vector<std::string>{"/usr/lib/llvm-22"}));

  for (const Json &bad : {Json("/usr/lib"), Json::array({1}), Json::object()}) {
    Json wrong = good;
    wrong["confinement"]["readable"] = bad;
    writeFile(dir / "summary.json", wrong.dump());
    auto read = readHarvestSummary(dir / "summary.json");
    ASSERT_FALSE(static_cast<bool>(read)) << bad;
    std::string message = llvm::toString(read.takeError());
    EXPECT_NE(message.find("confinement: field 'readable' is not a list of strings"), std::string::npos) << message;
  }
}

TEST(HarvestJournal, DefaultSizeCacheIsChecked) {
  TempDir dir;
  writeFile(dir / "c", "{\"options\": {}}\n{\"module\": \"a\", \"native_size\": 5}\n");
  auto cache = readDefaultSizeCache(dir / "c");
  ASSERT_TRUE(static_cast<bool>(cache)) << llvm::toString(cache.takeError());
  EXPECT_EQ(cache->Sizes.at("a").first, 5u);
  for (const char *line : {"{\"module\": \"a\", \"native_size\": \"5\"}", "{\"module\": 1, \"native_size\": 5}",
                           "{\"module\": \"../a\", \"native_size\": 5}", "{\"module\": \"a\"}"}) {
    writeFile(dir / "c", std::string("{\"options\": {}}\n") + line + "\n");
    auto bad = readDefaultSizeCache(dir / "c");
    ASSERT_FALSE(static_cast<bool>(bad)) << line;
    EXPECT_NE(llvm::toString(bad.takeError()).find(dir / "c" + " line 2: field '"), std::string::npos) << line;
  }
}

// The dataset takes only the logs an ok record with log_written promises.
TEST(HarvestJournal, DatasetInputsFollowTheRecords) {
  HarvestRecord ok = sampleRecord(), noLog = sampleRecord(), failed = sampleRecord(), zero = sampleRecord();
  ok.Module = "a", noLog.Module = "b", failed.Module = "c", zero.Module = "d";
  noLog.LogWritten = false;
  failed.Status = "failed", failed.LogWritten = false;
  zero.NativeSize = 0;
  std::map<std::string, const HarvestRecord *> records = {{"a", &ok}, {"b", &noLog}, {"c", &failed}, {"d", &zero}};
  std::vector<PlannedModule> plan = {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}};
  auto inputs = harvestDatasetInputs(Problem::Inliner, "/out", plan, records);
  ASSERT_EQ(inputs.size(), 1u);
  // Opened below the harvest, following no link there (BeneathPath.h).
  EXPECT_EQ(inputs[0].Below, "/out");
  EXPECT_EQ(inputs[0].LogPath, "logs/a.log");
  EXPECT_FLOAT_EQ(inputs[0].Reward.Value, 0.09f);
  EXPECT_EQ(harvestDatasetInputs(Problem::RegallocEvict, "/out", plan, records).size(), 2u);
}

// The --tfrecord dataset opens each log below the harvest (issue #33): with
// logs/sub a link (module sub/m0), it names the link and writes nothing.
TEST(HarvestJournal, DatasetLogsAreReadWithoutFollowingALinkBelowTheHarvest) {
  TempDir dir;
  writeFile(dir / "elsewhere/m0.log", "not a log of this harvest\n");
  writeFile(dir / "out/logs/.keep", "");
  ASSERT_EQ(::symlink((dir / "elsewhere").c_str(), (dir / "out/logs/sub").c_str()), 0);
  HarvestRecord ok;
  ok.Module = "sub/m0", ok.Status = "ok", ok.LogWritten = true, ok.Decisions = 1, ok.NativeSize = 10;
  std::map<std::string, const HarvestRecord *> records = {{"sub/m0", &ok}};
  auto inputs = harvestDatasetInputs(Problem::Inliner, dir / "out", {{"sub/m0", 1}}, records);
  ASSERT_EQ(inputs.size(), 1u);
  auto written = writeTFRecordDataset(inputs, dir / "dataset.tfrecord");
  ASSERT_FALSE(static_cast<bool>(written));
  std::string message = llvm::toString(written.takeError());
  EXPECT_NE(message.find(dir / "out/logs/sub: a symbolic link below " + dir / "out"), std::string::npos) << message;
  EXPECT_FALSE(exists(dir / "dataset.tfrecord"));
}

} // namespace
