// training-log end to end: logs shaped like LLVM's inliner and regalloc logs,
// checked with independent decoders (python3-protobuf, numpy).
#include "mlgo/log/TrainingLog.h"

#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <random>

using namespace mlgo;
using namespace mlgo::test;

namespace {

const std::string Tool = tool("training-log");
const std::string Python = "/usr/bin/python3 ";
std::string script(const char *name) { return quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/" + name) + " "; }

const char *const InlinerFeatures[] = {"sroa_savings",
                                       "sroa_losses",
                                       "load_elimination",
                                       "call_penalty",
                                       "call_argument_setup",
                                       "load_relative_intrinsic",
                                       "lowered_call_arg_setup",
                                       "indirect_call_penalty",
                                       "jump_table_penalty",
                                       "case_cluster_penalty",
                                       "switch_default_dest_penalty",
                                       "switch_penalty",
                                       "unsimplified_common_instructions",
                                       "num_loops",
                                       "dead_blocks",
                                       "simplified_instructions",
                                       "constant_args",
                                       "constant_offset_ptr_args",
                                       "callsite_cost",
                                       "cold_cc_penalty",
                                       "last_call_to_static_bonus",
                                       "is_multiple_blocks",
                                       "nested_inlines",
                                       "nested_inline_cost_estimate",
                                       "threshold",
                                       "callee_basic_block_count",
                                       "callsite_height",
                                       "node_count",
                                       "nr_ctant_params",
                                       "cost_estimate",
                                       "edge_count",
                                       "caller_users",
                                       "caller_conditionally_executed_blocks",
                                       "caller_basic_block_count",
                                       "callee_conditionally_executed_blocks",
                                       "callee_users",
                                       "is_callee_avail_external",
                                       "is_caller_avail_external"};

template <typename T> std::string raw(const std::vector<T> &values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// An inliner log as development mode writes it: 38 features,
// inlining_default, inlining_decision; one context ""; no score.
std::string inlinerLog(int observations, unsigned seed) {
  LogHeader header;
  for (const char *name : InlinerFeatures)
    header.Features.push_back({name, ElementType::Int64, {1}, 0});
  header.Features.push_back({"inlining_default", ElementType::Int64, {1}, 0});
  header.Features.push_back({"inlining_decision", ElementType::Int64, {1}, 0});
  std::string text;
  llvm::raw_string_ostream os(text);
  TrainingLogWriter writer(os, header);
  writer.switchContext("");
  std::mt19937 rng(seed);
  for (int i = 0; i < observations; ++i) {
    std::vector<std::string> tensors;
    for (size_t f = 0; f < 38; ++f)
      tensors.push_back(raw<int64_t>({static_cast<int64_t>(rng() % 200) - 50}));
    int64_t decision = rng() % 2;
    tensors.push_back(raw<int64_t>({decision}));
    tensors.push_back(raw<int64_t>({decision}));
    std::vector<llvm::StringRef> refs(tensors.begin(), tensors.end());
    EXPECT_FALSE(static_cast<bool>(writer.observation(refs)));
  }
  os.flush();
  return text;
}

// A regalloc eviction log: 21 features ([1,33] and progress), index_to_evict,
// a float reward; one context per function; each observation has an outcome,
// 0 except the function's last.
std::string evictionLog(const std::vector<std::pair<std::string, int>> &functions) {
  LogHeader header;
  const char *ints[] = {"mask", "is_free", "is_hint", "is_local", "max_stage", "min_stage"};
  const char *floats[] = {"nr_urgent",
                          "nr_broken_hints",
                          "nr_rematerializable",
                          "nr_defs_and_uses",
                          "weighed_reads_by_max",
                          "weighed_writes_by_max",
                          "weighed_read_writes_by_max",
                          "weighed_indvars_by_max",
                          "hint_weights_by_max",
                          "start_bb_freq_by_max",
                          "end_bb_freq_by_max",
                          "hottest_bb_freq_by_max",
                          "liverange_size",
                          "use_def_density"};
  for (const char *n : ints)
    header.Features.push_back({n, ElementType::Int64, {1, 33}, 0});
  for (const char *n : floats)
    header.Features.push_back({n, ElementType::Float, {1, 33}, 0});
  header.Features.push_back({"progress", ElementType::Float, {1}, 0});
  header.Features.push_back({"index_to_evict", ElementType::Int64, {1}, 0});
  header.Score = TensorSpec{"reward", ElementType::Float, {1}, 0};
  std::string text;
  llvm::raw_string_ostream os(text);
  TrainingLogWriter writer(os, header);
  std::mt19937 rng(3);
  for (const auto &[function, count] : functions) {
    writer.switchContext(function);
    for (int i = 0; i < count; ++i) {
      std::vector<std::string> tensors;
      for (size_t f = 0; f < 6; ++f) {
        std::vector<int64_t> v(33);
        for (auto &x : v)
          x = rng() % 3;
        tensors.push_back(raw(v));
      }
      for (size_t f = 0; f < 14; ++f) {
        std::vector<float> v(33);
        for (auto &x : v)
          x = static_cast<float>(rng() % 1000) / 997.0f;
        tensors.push_back(raw(v));
      }
      tensors.push_back(raw<float>({static_cast<float>(i) / count}));
      tensors.push_back(raw<int64_t>({static_cast<int64_t>(rng() % 33)}));
      std::vector<llvm::StringRef> refs(tensors.begin(), tensors.end());
      EXPECT_FALSE(static_cast<bool>(writer.observation(refs)));
      EXPECT_FALSE(static_cast<bool>(writer.outcome(raw<float>({i + 1 == count ? 12.5f : 0.0f}))));
    }
  }
  os.flush();
  return text;
}

class TrainingLogTool : public ::testing::Test {
protected:
  TempDir Work;
};

TEST_F(TrainingLogTool, ValidateAcceptsCompleteLogsOnly) {
  writeFile(Work / "logs/a.log", inlinerLog(50, 1));
  writeFile(Work / "logs/sub/b.log", inlinerLog(5, 2));
  CommandResult ok = run(Tool + " validate " + quote(Work / "logs"));
  EXPECT_EQ(ok.ExitCode, 0) << ok.Err;
  EXPECT_NE(ok.Out.find("ok: " + (Work / "logs/a.log") + ": 1 stream(s), 1 context record(s), 50 observation(s)"),
            std::string::npos)
      << ok.Out;
  std::string whole = inlinerLog(50, 1);
  writeFile(Work / "cut.log", whole.substr(0, whole.size() - 100));
  CommandResult bad = run(Tool + " validate " + quote(Work / "logs/a.log") + " " + quote(Work / "cut.log"));
  EXPECT_EQ(bad.ExitCode, 1);
  EXPECT_NE(bad.Err.find("cut.log: at byte"), std::string::npos) << bad.Err;
  EXPECT_NE(bad.Err.find("truncated observation 49"), std::string::npos) << bad.Err;
}

TEST_F(TrainingLogTool, StatsAndDump) {
  writeFile(Work / "e.log", evictionLog({{"f1", 4}, {"f2", 3}}));
  CommandResult stats = run(Tool + " stats --json " + quote(Work / "e.log"));
  ASSERT_EQ(stats.ExitCode, 0) << stats.Err;
  auto json = nlohmann::json::parse(stats.Out);
  EXPECT_EQ(json["contexts"], 2);
  EXPECT_EQ(json["observations"], 7);
  EXPECT_EQ(json["outcomes"], 7);
  EXPECT_EQ(json["decision"]["name"], "index_to_evict");
  EXPECT_EQ(json["features"]["mask"]["values"], 7 * 33);
  EXPECT_GE(json["features"]["mask"]["min"].get<double>(), 0);
  EXPECT_LE(json["features"]["mask"]["max"].get<double>(), 2);
  int histogramTotal = 0;
  for (auto &[value, count] : json["decision"]["histogram"].items())
    histogramTotal += count.get<int>();
  EXPECT_EQ(histogramTotal, 7);
  writeFile(Work / "stats.json", stats.Out);
  mustRun(Python + script("check_schema.py") +
          quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/training_log_stats.schema.json") + " " +
          quote(Work / "stats.json"));

  CommandResult dump = run(Tool + " dump " + quote(Work / "e.log"));
  ASSERT_EQ(dump.ExitCode, 0) << dump.Err;
  std::vector<nlohmann::json> rows;
  std::istringstream lines(dump.Out);
  for (std::string line; std::getline(lines, line);)
    rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0]["context"], "f1");
  EXPECT_EQ(rows[4]["context"], "f2");
  EXPECT_EQ(rows[4]["observation"], 0);
  EXPECT_EQ(rows[0]["mask"].size(), 33u);
  EXPECT_EQ(rows[3]["outcome"], 12.5);
  EXPECT_EQ(rows[2]["outcome"], 0.0);
  writeFile(Work / "dump.jsonl", dump.Out);
  mustRun(Python + script("check_schema.py") + "--lines " +
          quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/training_log_dump.schema.json") + " " +
          quote(Work / "dump.jsonl"));

  CommandResult csv = run(Tool + " dump --format=csv " + quote(Work / "e.log"));
  ASSERT_EQ(csv.ExitCode, 0) << csv.Err;
  std::istringstream csvLines(csv.Out);
  std::string head, first;
  std::getline(csvLines, head);
  std::getline(csvLines, first);
  size_t columns = std::count(head.begin(), head.end(), ',') + 1;
  EXPECT_EQ(columns, 2u + 20 * 33 + 1 + 1 + 1); // context, observation, 20x33, progress, decision, reward
  EXPECT_EQ(static_cast<size_t>(std::count(first.begin(), first.end(), ',')) + 1, columns);
  EXPECT_EQ(head.rfind("context,observation,mask[0],mask[1]", 0), 0u);
}

TEST_F(TrainingLogTool, ToTFRecordDecodedByProtobuf) {
  writeFile(Work / "logs/m1.log", inlinerLog(6, 11));
  writeFile(Work / "logs/m2.log", inlinerLog(4, 12));
  std::string records = Work / "trace.tfrecord";
  CommandResult r = run(Tool + " to-tfrecord --output=" + quote(records) + " --keys_file=" + quote(Work / "keys") +
                        " " + quote(Work / "logs"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(Work / "keys"), "default\ndefault\n");
  CommandResult decoded = run(Python + script("decode_sequence_examples.py") + quote(records));
  ASSERT_EQ(decoded.ExitCode, 0) << decoded.Err;
  auto json = nlohmann::json::parse(decoded.Out);
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0].size(), 41u); // 38 features, inlining_default, inlining_decision, reward
  EXPECT_EQ(json[0]["inlining_decision"].size(), 6u);
  EXPECT_EQ(json[1]["reward"], nlohmann::json::parse("[[0.0],[0.0],[0.0],[0.0]]"));
  EXPECT_EQ(json[0]["inlining_default"], json[0]["inlining_decision"]);

  // The values are the log's: compare with dump.
  CommandResult dump = run(Tool + " dump " + quote(Work / "logs/m1.log"));
  ASSERT_EQ(dump.ExitCode, 0) << dump.Err;
  std::istringstream lines(dump.Out);
  std::string line;
  size_t steps = 0;
  for (; std::getline(lines, line); ++steps) {
    auto row = nlohmann::json::parse(line);
    ASSERT_LT(steps, json[0]["callsite_cost"].size()) << line;
    ASSERT_TRUE(row.contains("callsite_cost")) << line;
    EXPECT_EQ(json[0]["callsite_cost"][steps][0], row["callsite_cost"]);
    EXPECT_EQ(json[0]["inlining_decision"][steps][0], row["inlining_decision"]);
  }
  EXPECT_EQ(steps, 6u) << "dump printed " << steps << " rows";
}

TEST_F(TrainingLogTool, RegallocRecordsPerFunctionWithScoreRewards) {
  writeFile(Work / "e.log", evictionLog({{"f1", 3}, {"empty", 0}, {"f2", 2}, {"f1", 1}}));
  std::string records = Work / "ra.tfrecord";
  mustRun(Tool + " to-tfrecord --reward=score --output=" + quote(records) + " --keys_file=" + quote(Work / "keys") +
          " " + quote(Work / "e.log"));
  EXPECT_EQ(readFile(Work / "keys"), "f1\nf2\n"); // the revisited f1 merged; empty has no record
  CommandResult decoded = run(Python + script("decode_sequence_examples.py") + quote(records));
  ASSERT_EQ(decoded.ExitCode, 0) << decoded.Err;
  auto json = nlohmann::json::parse(decoded.Out);
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["mask"].size(), 4u);
  EXPECT_EQ(json[0]["mask"][0].size(), 33u);
  EXPECT_EQ(json[0]["liverange_size"][0].size(), 33u);
  EXPECT_EQ(json[0]["reward"], nlohmann::json::parse("[[0.0],[0.0],[12.5],[12.5]]"));
  EXPECT_EQ(json[1]["reward"], nlohmann::json::parse("[[0.0],[12.5]]"));
  EXPECT_EQ(run(Tool + " to-tfrecord --reward=bogus --output=x " + quote(Work / "e.log")).ExitCode, 2);
  mustRun(Tool + " to-tfrecord --reward=constant:0.25 --output=" + quote(records) + " " + quote(Work / "e.log"));
  json = nlohmann::json::parse(run(Python + script("decode_sequence_examples.py") + quote(records)).Out);
  EXPECT_EQ(json[1]["reward"], nlohmann::json::parse("[[0.25],[0.25]]"));
}

TEST_F(TrainingLogTool, VocabMatchesNumpy) {
  writeFile(Work / "logs/a.log", inlinerLog(300, 21));
  writeFile(Work / "logs/b.log", inlinerLog(200, 22));
  mustRun(Tool + " vocab --output_dir=" + quote(Work / "vocab") + " --num_buckets=100 " + quote(Work / "logs"));
  writeFile(Work / "dump.jsonl", run(Tool + " dump " + quote(Work / "logs/a.log")).Out +
                                     run(Tool + " dump " + quote(Work / "logs/b.log")).Out);
  CommandResult oracle = run(Python + script("vocab_oracle.py") + quote(Work / "dump.jsonl") + " " +
                             quote(Work / "vocab") + " 100 inlining_decision,reward");
  EXPECT_EQ(oracle.ExitCode, 0) << oracle.Err << oracle.Out;
  EXPECT_NE(oracle.Out.find("ok: 39 features"), std::string::npos) << oracle.Out;

  writeFile(Work / "e.log", evictionLog({{"f1", 30}, {"f2", 20}}));
  mustRun(Tool + " vocab --output_dir=" + quote(Work / "ravocab") + " " + quote(Work / "e.log"));
  writeFile(Work / "edump.jsonl", run(Tool + " dump " + quote(Work / "e.log")).Out);
  oracle = run(Python + script("vocab_oracle.py") + quote(Work / "edump.jsonl") + " " + quote(Work / "ravocab") +
               " 1000 mask,nr_urgent,is_hint,is_local,is_free,max_stage,min_stage,reward");
  EXPECT_EQ(oracle.ExitCode, 0) << oracle.Err << oracle.Out;
}

} // namespace

namespace {

// Issue 16, defect 5: a feature named ../escaped wrote a file beside the
// output directory. Now the whole vocab is refused, naming the log, and
// nothing is written anywhere.
TEST_F(TrainingLogTool, VocabRefusesFeatureNamesThatAreNotOneFileName) {
  for (const char *name : {"../escaped", "a/b", "..", "."}) {
    SCOPED_TRACE(name);
    LogHeader header;
    header.Features = {{"fine", ElementType::Int64, {1}, 0}, {name, ElementType::Int64, {1}, 0}};
    std::string text;
    {
      llvm::raw_string_ostream os(text);
      TrainingLogWriter writer(os, header);
      writer.switchContext("");
      EXPECT_FALSE(static_cast<bool>(writer.observation({raw<int64_t>({1}), raw<int64_t>({2})})));
    }
    TempDir dir;
    writeFile(dir / "in/evil.log", text);
    CommandResult r = run(Tool + " vocab --output_dir=" + quote(dir / "out/vocab") + " " + quote(dir / "in/evil.log"));
    EXPECT_EQ(r.ExitCode, 1);
    EXPECT_NE(r.Err.find("evil.log: feature name '" + std::string(name) + "' cannot be used as a file name"),
              std::string::npos)
        << r.Err;
    EXPECT_EQ(listTree(dir.path()), (std::set<std::string>{"in/", "in/evil.log"}));
  }
}

} // namespace
