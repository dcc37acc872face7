// libMLGORegAllocAdvisor.so inside the real llc-22: it records the default
// eviction and priority advisors' decisions with LLVM's own features and
// score, and leaves the allocation exactly as plain llc's.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/PythonPackage.h"
#include "support/TestSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>

using namespace mlgo;
using namespace mlgo::test;

namespace {

const std::string Clang = MLGO_CLANG;
const std::string Plugin = std::string(MLGO_BIN_DIR) + "/../lib/mlgo-corpus/libMLGORegAllocAdvisor.so";

// General-purpose registers under pressure across calls: the calls' argument
// and result registers give the allocation order hints.
std::string callPressureFunction(const std::string &name, int live) {
  std::string s = "long " + name + "(long *p, int n) {\n";
  for (int i = 0; i < live; ++i)
    s += "  long v" + std::to_string(i) + " = p[" + std::to_string(i) + "] * " + std::to_string(i + 3) + ";\n";
  s += "  for (int k = 0; k < n; ++k) {\n";
  for (int i = 0; i < live; ++i)
    s += "    v" + std::to_string(i) + " = ext(v" + std::to_string(i) + " + v" + std::to_string((i + 5) % live) +
         ") ^ p[k];\n";
  s += "  }\n  return 0";
  for (int i = 0; i < live; ++i)
    s += " + v" + std::to_string(i);
  return s + ";\n}\n";
}

class RegallocPlugin : public ::testing::Test {
protected:
  // C with vector and general-purpose pressure, and C++ with the standard
  // library's sort and small templates: bitcode as a corpus holds it.
  void SetUp() override {
    std::string c = "extern long ext(long);\n" + pressureFunction("doubles", 28) + callPressureFunction("longs", 20);
    writeFile(Work / "m.c", c);
    mustRun(Clang + " -O2 -emit-llvm -c " + quote(Work / "m.c") + " -o " + quote(Work / "c.bc"));
    writeFile(Work / "m.cpp", "#include <algorithm>\n#include <map>\n#include <string>\n#include <vector>\n"
                              "long ext(long);\n" +
                                  callPressureFunction("longs", 18) +
                                  "int sorted(std::vector<std::string> &v, std::map<std::string, int> &m) {\n"
                                  "  std::sort(v.begin(), v.end());\n"
                                  "  int s = 0; for (auto &x : v) s += m[x] += static_cast<int>(x.size());\n"
                                  "  return s; }\n");
    mustRun(Clang + " -x c++ -std=c++17 -O2 -emit-llvm -c " + quote(Work / "m.cpp") + " -o " + quote(Work / "cxx.bc"));
  }

  std::string llc(const std::string &module, const std::string &object, const std::string &flags = "") {
    return "llc-22 -O2 -filetype=obj " + flags + " " + quote(Work / module) + " -o " + quote(Work / object);
  }
  std::string record(const std::string &module, const std::string &object, const std::string &log) {
    return llc(module, object, "-load " + quote(Plugin) + " -mlgo-regalloc-log=" + quote(Work / log));
  }
  std::string recordPriority(const std::string &module, const std::string &object, const std::string &log,
                             const std::string &flags = "") {
    return llc(module, object, "-load " + quote(Plugin) + " -mlgo-regalloc-priority-log=" + quote(Work / log) + flags);
  }

  TempDir Work;
};

TEST_F(RegallocPlugin, RecordingTheDefaultLeavesTheObjectByteIdenticalToPlainLlc) {
  for (const std::string module : {"c", "cxx"}) {
    mustRun(llc(module + ".bc", module + ".plain.o"));
    CommandResult r = run(record(module + ".bc", module + ".o", module + ".log"));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    EXPECT_EQ(readFile(Work / (module + ".o")), readFile(Work / (module + ".plain.o"))) << module;
    // No channel files left beside the log.
    EXPECT_FALSE(exists(Work / (module + ".log.channel.in")));
    EXPECT_FALSE(exists(Work / (module + ".log.channel.out")));

    CommandResult valid = run(tool("training-log") + " validate " + quote(Work / (module + ".log")));
    EXPECT_EQ(valid.ExitCode, 0) << valid.Out << valid.Err;
    CommandResult independent =
        run("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/independent_log_reader.py") + " " +
            quote(Work / (module + ".log")));
    EXPECT_EQ(independent.ExitCode, 0) << independent.Out << independent.Err;

    std::vector<LoggedObservation> log = readObservations(Work / (module + ".log"));
    ASSERT_GT(log.size(), 20u) << module;
    std::map<std::string, double> reward;
    size_t evictions = 0;
    for (size_t i = 0; i < log.size(); ++i) {
      const LoggedObservation &o = log[i];
      const std::vector<double> &mask = o.Features.at("mask");
      ASSERT_EQ(mask.size(), 33u);
      auto column = static_cast<size_t>(o["index_to_evict"]);
      ASSERT_LE(column, 32u);
      EXPECT_EQ(mask[column], 1) << module << " " << o.Context << " " << o.Index << " column " << column;
      evictions += column < 32;
      ASSERT_TRUE(o.Outcome.has_value());
      bool last = i + 1 == log.size() || log[i + 1].Context != o.Context;
      if (last)
        reward[o.Context] = *o.Outcome;
      else
        EXPECT_EQ(*o.Outcome, 0.0) << module << " " << o.Context << " " << o.Index;
    }
    EXPECT_GT(evictions, 0u) << module << ": the default evicted somewhere";
    for (const auto &[function, score] : reward)
      EXPECT_GT(score, 0.0) << module << " " << function << ": spills and copies cost something";
  }
}

TEST_F(RegallocPlugin, RecordingUnderClangLeavesTheObjectByteIdenticalToPlainClang) {
  for (const std::string source : {"m.c", "m.cpp"}) {
    std::string compile = Clang + " -O2 -c " + quote(Work / source);
    mustRun(compile + " -o " + quote(Work / (source + ".plain.o")));
    CommandResult r = run(compile + " -o " + quote(Work / (source + ".o")) + " -Xclang -load -Xclang " + quote(Plugin) +
                          " -mllvm -mlgo-regalloc-log=" + quote(Work / (source + ".log")));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    EXPECT_EQ(readFile(Work / (source + ".o")), readFile(Work / (source + ".plain.o"))) << source;
    EXPECT_GT(readObservations(Work / (source + ".log")).size(), 20u) << source;
  }
}

TEST_F(RegallocPlugin, RecordedColumnsReplayedOnLlvmsOwnChannelGivePlainLlcsObjectAndFeatures) {
  for (const std::string module : {"c", "cxx"}) {
    mustRun(llc(module + ".bc", module + ".plain.o"));
    CommandResult r = run(record(module + ".bc", module + ".o", module + ".log"));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    // LLVM's ML advisor, its model answered with the recorded columns: it
    // takes the register at each column, so only the default's columns give
    // the default's allocation; its features are compared on the way.
    std::string base = Work / (module + ".channel");
    mustRun("mkfifo " + quote(base + ".in") + " " + quote(base + ".out"));
    std::string replay = "timeout 120 /usr/bin/python3 " +
                         quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/replay_eviction_channel.py") + " " +
                         quote(Work / (module + ".log")) + " " + quote(base);
    CommandResult replayed = run("(" + replay + " > " + quote(Work / "replay.txt") + ") & " +
                                 llc(module + ".bc", module + ".replayed.o",
                                     "-regalloc=greedy -regalloc-enable-advisor=release "
                                     "-regalloc-evict-interactive-channel-base=" +
                                         quote(base)) +
                                 "; status=$?; wait $! || exit 3; exit $status");
    EXPECT_EQ(replayed.ExitCode, 0) << replayed.Err << readFile(Work / "replay.txt");
    EXPECT_NE(readFile(Work / "replay.txt").find(" 0 feature mismatches"), std::string::npos)
        << readFile(Work / "replay.txt");
    EXPECT_EQ(readFile(Work / (module + ".replayed.o")), readFile(Work / (module + ".plain.o"))) << module;
  }
}

TEST_F(RegallocPlugin, HarvestLogsRecordsDefaultEvictionTracesThroughThePlugin) {
  mustRun("mkdir -p " + quote(Work / "bc") + " && cp " + quote(Work / "c.bc") + " " + quote(Work / "cxx.bc") + " " +
          quote(Work / "bc"));
  mustRun(tool("make-corpus") + " -q --input_dir=" + quote(Work / "bc") + " --output_dir=" + quote(Work / "corpus") +
          " --default_args='-O2 -c'");
  std::string out = Work / "out";
  CommandResult r = run(
      harvestCommand(Work / "corpus", out, "--problem=regalloc-evict --policy=default --compiler=llc --mode=plugin"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("using plugin mode"), std::string::npos) << r.Err;
  auto journal = journalByModule(out);
  for (const std::string module : {"c", "cxx"}) {
    ASSERT_EQ(journal[module]["status"], "ok") << journal[module].dump();
    // The log is the plugin's under plain llc-22 -O2, byte for byte.
    mustRun(record(module + ".bc", module + ".o", module + ".log"));
    std::string harvested = out + "/logs/" + module + ".log";
    EXPECT_EQ(readFile(harvested), readFile(Work / (module + ".log"))) << module;
    std::vector<LoggedObservation> log = readObservations(harvested);
    EXPECT_EQ(journal[module]["decisions"], log.size());
    double rewards = 0;
    for (const LoggedObservation &o : log)
      rewards += o.Outcome.value_or(0);
    EXPECT_NEAR(journal[module]["regalloc_score"].get<double>(), rewards, 1e-3) << module;
  }

  // Through clang (the module's own command line): the same kind of log.
  std::string viaClang = Work / "out-clang";
  r = run(harvestCommand(Work / "corpus", viaClang,
                         "--problem=regalloc-evict --policy=default --compiler=clang --mode=plugin"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  journal = journalByModule(viaClang);
  for (const std::string module : {"c", "cxx"}) {
    ASSERT_EQ(journal[module]["status"], "ok") << journal[module].dump();
    std::string harvested = viaClang + "/logs/" + module + ".log";
    CommandResult valid = run(tool("training-log") + " validate " + quote(harvested));
    EXPECT_EQ(valid.ExitCode, 0) << valid.Out << valid.Err;
    std::vector<LoggedObservation> log = readObservations(harvested);
    EXPECT_GT(log.size(), 20u) << module;
    EXPECT_EQ(journal[module]["decisions"], log.size());
  }
}

// The reward against an independent count. In a function of one basic block
// (frequency 1) RegAllocScore with only the copy weight at 1 counts its
// copies, with only the load (store) weight its instructions that load
// (store); these are counted here in the machine IR llc prints right after the
// virtual register rewriter, where the plugin scores. With LLVM's own weights
// the reward is their weighted sum plus the rematerialisations; with zero
// weights, 0.
TEST_F(RegallocPlugin, TheRewardIsLlvmsRegAllocScore) {
  std::string s = "extern long ext(long);\nlong straight(long *p) {\n";
  const int live = 22;
  for (int i = 0; i < live; ++i)
    s += "  long v" + std::to_string(i) + " = ext(p[" + std::to_string(i) + "]);\n";
  for (int i = 0; i < live; ++i)
    s += "  v" + std::to_string(i) + " = ext(v" + std::to_string(i) + " ^ v" + std::to_string((i + 3) % live) + ");\n";
  s += "  return 0";
  for (int i = 0; i < live; ++i)
    s += " + v" + std::to_string(i) + " * " + std::to_string(i + 1);
  writeFile(Work / "straight.c", s + ";\n}\n");
  mustRun(Clang + " -O2 -emit-llvm -c " + quote(Work / "straight.c") + " -o " + quote(Work / "straight.bc"));

  const std::vector<std::pair<std::string, double>> weights = {
      {"copy", 0.2}, {"load", 4.0}, {"store", 1.0}, {"cheap-remat", 0.2}, {"expensive-remat", 1.0}};
  auto reward = [&](const std::string &only) {
    std::string flags;
    for (const auto &[name, weight] : weights)
      flags += " -regalloc-" + name + "-weight=" + (only == "*" ? std::to_string(weight) : only == name ? "1" : "0");
    std::string log = "w-" + only + ".log";
    mustRun(llc("straight.bc", "w.o", "-load " + quote(Plugin) + " -mlgo-regalloc-log=" + quote(Work / log) + flags));
    std::vector<LoggedObservation> observations = readObservations(Work / log);
    EXPECT_GT(observations.size(), 10u);
    return observations.empty() ? -1.0 : observations.back().Outcome.value_or(-1.0);
  };

  mustRun("llc-22 -O2 -stop-after=virtregrewriter " + quote(Work / "straight.bc") + " -o " +
          quote(Work / "straight.mir"));
  size_t blocks = 0, copies = 0, loads = 0, stores = 0;
  std::istringstream mir(readFile(Work / "straight.mir"));
  for (std::string line; std::getline(mir, line);) {
    blocks += line.rfind("  bb.", 0) == 0;
    copies += line.find("= COPY ") != std::string::npos || line.find(" COPY $") != std::string::npos;
    size_t memory = line.find(":: (");
    if (memory == std::string::npos)
      continue;
    std::string operands = line.substr(memory);
    loads += operands.find("(load") != std::string::npos;
    stores += operands.find("(store") != std::string::npos || operands.find("load store") != std::string::npos;
  }
  ASSERT_EQ(blocks, 1u) << "one block, so every frequency is 1";
  ASSERT_GT(copies, 0u);
  ASSERT_GT(loads, 0u);
  ASSERT_GT(stores, 0u);
  EXPECT_EQ(reward("copy"), static_cast<double>(copies));
  EXPECT_EQ(reward("load"), static_cast<double>(loads));
  EXPECT_EQ(reward("store"), static_cast<double>(stores));
  double expected =
      0.2 * copies + 4.0 * loads + 1.0 * stores + 0.2 * reward("cheap-remat") + 1.0 * reward("expensive-remat");
  EXPECT_NEAR(reward("*"), expected, 1e-3);
  EXPECT_EQ(reward("none"), 0.0);
}

TEST_F(RegallocPlugin, AModuleWithoutEvictionsLeavesNoLogAndAnUnwritableLogFailsCleanly) {
  // No function bodies, and llc -O0 (fast register allocation): no advisor
  // is ever asked, so no log file, not an empty one a reader rejects.
  writeFile(Work / "nobody.c", "int only_declared(int);\nint global = 3;\n");
  mustRun(Clang + " -O2 -emit-llvm -c " + quote(Work / "nobody.c") + " -o " + quote(Work / "nobody.bc"));
  CommandResult r = run(record("nobody.bc", "nobody.o", "nobody.log"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_FALSE(exists(Work / "nobody.log"));
  r = run(llc("c.bc", "o0.o", "-O0 -load " + quote(Plugin) + " -mlgo-regalloc-log=" + quote(Work / "o0.log")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_FALSE(exists(Work / "o0.log"));
  EXPECT_FALSE(exists(Work / "o0.log.channel.in"));

  // A log where nothing can be created: an error, not a crash.
  r = run(record("c.bc", "c.o", "missing/c.log"));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("mlgo-regalloc: cannot create"), std::string::npos) << r.Err;
}

TEST_F(RegallocPlugin, WithoutALogThePluginChangesNothing) {
  mustRun(llc("c.bc", "plain.o"));
  CommandResult r = run(llc("c.bc", "loaded.o", "-load " + quote(Plugin)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(Work / "loaded.o"), readFile(Work / "plain.o"));
}

// ---------------------------------------------------------------------------
// The priority trace (-mlgo-regalloc-priority-log).

// LLVM 22's DefaultPriorityAdvisor::getPriority on x86-64 (no register class
// puts its allocation priority above globalness, no reverse local
// assignment): in stage RS_Split (2) the size; otherwise bit 31, bit 30 for a
// range with a known preference, bits 28-24 the class's AllocationPriority
// and either bit 29 with min(size, 2^24 - 1) (global ranges: every stage past
// RS_Split, and multi-block or large ones) or, without bit 29, a local
// range's instruction distance. The log holds that as a float, as LLVM's
// development mode logs it.
bool isGlobalPriority(double priority, double size) {
  uint32_t base = static_cast<uint32_t>(std::min(size, double((1u << 24) - 1))) | 1u << 31 | 1u << 29;
  for (uint32_t preference : {0u, 1u << 30})
    for (uint32_t classPriority = 0; classPriority < 32; ++classPriority)
      if (static_cast<double>(static_cast<float>(base | preference | classPriority << 24)) == priority)
        return true;
  return false;
}

// The functions' rewards: the outcome of each context's last observation,
// every other outcome 0.
std::map<std::string, double> functionRewards(const std::vector<LoggedObservation> &log, const std::string &what) {
  std::map<std::string, double> reward;
  for (size_t i = 0; i < log.size(); ++i) {
    const LoggedObservation &o = log[i];
    EXPECT_TRUE(o.Outcome.has_value()) << what << " " << o.Context << " " << o.Index;
    bool last = i + 1 == log.size() || log[i + 1].Context != o.Context;
    if (last)
      reward[o.Context] = o.Outcome.value_or(-1);
    else
      EXPECT_EQ(o.Outcome.value_or(-1), 0.0) << what << " " << o.Context << " " << o.Index;
  }
  return reward;
}

TEST_F(RegallocPlugin, PriorityTraceLeavesTheObjectByteIdenticalToPlainLlc) {
  for (const std::string module : {"c", "cxx"}) {
    mustRun(llc(module + ".bc", module + ".plain.o"));
    CommandResult r = run(recordPriority(module + ".bc", module + ".o", module + ".plog"));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    EXPECT_EQ(r.Err, "");
    EXPECT_EQ(readFile(Work / (module + ".o")), readFile(Work / (module + ".plain.o"))) << module;
    EXPECT_FALSE(exists(Work / (module + ".plog.channel.in")));
    EXPECT_FALSE(exists(Work / (module + ".plog.channel.out")));

    std::string log = Work / (module + ".plog");
    CommandResult valid = run(tool("training-log") + " validate " + quote(log));
    EXPECT_EQ(valid.ExitCode, 0) << valid.Out << valid.Err;
    CommandResult independent =
        run("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/independent_log_reader.py") + " " +
            quote(log));
    EXPECT_EQ(independent.ExitCode, 0) << independent.Out << independent.Err;

    // LLVM's ML priority advisor's declaration (MLRegAllocPriorityAdvisor.cpp:
    // li_size, stage int64; weight float; the float advice `priority`), then
    // development mode's float reward.
    std::string header = readFile(log).substr(0, readFile(log).find('\n'));
    EXPECT_EQ(header, "{\"features\":[{\"name\":\"li_size\",\"type\":\"int64_t\",\"port\":0,\"shape\":[1]},"
                      "{\"name\":\"stage\",\"type\":\"int64_t\",\"port\":0,\"shape\":[1]},"
                      "{\"name\":\"weight\",\"type\":\"float\",\"port\":0,\"shape\":[1]},"
                      "{\"name\":\"priority\",\"type\":\"float\",\"port\":0,\"shape\":[1]}],"
                      "\"score\":{\"name\":\"reward\",\"type\":\"float\",\"port\":0,\"shape\":[1]}}");

    std::vector<LoggedObservation> observations = readObservations(log);
    ASSERT_GT(observations.size(), 50u) << module;
    for (const LoggedObservation &o : observations) {
      ASSERT_EQ(o.Features.size(), 4u);
      for (const auto &[name, values] : o.Features)
        ASSERT_EQ(values.size(), 1u) << name;
    }
    // Every function with a virtual register is asked (not only those with
    // evictions): some have nothing to score.
    std::map<std::string, double> reward = functionRewards(observations, module);
    size_t scored = 0;
    for (const auto &[function, score] : reward) {
      EXPECT_GE(score, 0.0) << module << " " << function;
      scored += score > 0;
    }
    EXPECT_GT(scored, 0u) << module << ": spills and copies cost something";

    // The same allocation, so the same RegAllocScore as the eviction trace's
    // for every function both traces saw.
    mustRun(record(module + ".bc", module + ".e.o", module + ".elog"));
    size_t shared = 0;
    for (const auto &[function, score] : functionRewards(readObservations(Work / (module + ".elog")), module)) {
      if (!reward.count(function))
        continue;
      ++shared;
      EXPECT_EQ(reward[function], score) << module << " " << function;
    }
    EXPECT_GT(shared, 0u) << module;

    // Our Python package reads it as a priority log.
    if (HavePythonPackage) {
      CommandResult py = run("env PYTHONPATH=" + quote(PythonPackageDir) + " " + quote(PackagePython3) +
                             " -c 'import sys, mlgo_corpus as m; l = m.read_log(sys.argv[1]); "
                             "print(l.problem, len(l), l.decision_name, int(l.has_reward.sum()))' " +
                             quote(log));
      EXPECT_EQ(py.ExitCode, 0) << py.Err;
      EXPECT_EQ(py.Out, "regalloc-priority " + std::to_string(observations.size()) + " priority " +
                            std::to_string(observations.size()) + "\n");
    }
  }
}

TEST_F(RegallocPlugin, PriorityTraceUnderClangLeavesTheObjectByteIdenticalToPlainClang) {
  for (const std::string source : {"m.c", "m.cpp"}) {
    std::string compile = Clang + " -O2 -c " + quote(Work / source);
    mustRun(compile + " -o " + quote(Work / (source + ".plain.o")));
    CommandResult r = run(compile + " -o " + quote(Work / (source + ".o")) + " -Xclang -load -Xclang " + quote(Plugin) +
                          " -mllvm -mlgo-regalloc-priority-log=" + quote(Work / (source + ".plog")));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    EXPECT_EQ(readFile(Work / (source + ".o")), readFile(Work / (source + ".plain.o"))) << source;
    EXPECT_GT(readObservations(Work / (source + ".plog")).size(), 50u) << source;
  }
}

// The logged priority against LLVM's formula (isGlobalPriority above), with
// the stage and size LLVM's ML advisor computed for the same query.
TEST_F(RegallocPlugin, TheLoggedPriorityIsTheDefaultPriorityOfItsQuery) {
  size_t split = 0, later = 0, global = 0, local = 0;
  for (const std::string module : {"c", "cxx"}) {
    mustRun(recordPriority(module + ".bc", module + ".o", module + ".plog"));
    for (const LoggedObservation &o : readObservations(Work / (module + ".plog"))) {
      std::string where = module + " " + o.Context + " " + std::to_string(o.Index);
      double priority = o["priority"], size = o["li_size"], stage = o["stage"];
      ASSERT_TRUE(std::isfinite(priority)) << where;
      ASSERT_EQ(priority, std::floor(priority)) << where;
      ASSERT_GT(size, 0) << where;
      // enqueue() turns RS_New into RS_Assign before it asks; RS_Done ranges are never enqueued.
      ASSERT_GE(stage, 1) << where;
      ASSERT_LE(stage, 5) << where;
      if (stage == 2) {
        ++split;
        EXPECT_EQ(priority, size) << where;
        continue;
      }
      EXPECT_GE(priority, 2147483648.0) << where;
      EXPECT_LE(priority, 4294967296.0) << where;
      auto bits = static_cast<uint64_t>(priority);
      if (stage > 2) {
        ++later;
        EXPECT_TRUE(isGlobalPriority(priority, size)) << where << " priority " << priority << " size " << size;
      } else if (bits & (1u << 29)) {
        ++global;
        EXPECT_TRUE(isGlobalPriority(priority, size)) << where << " priority " << priority << " size " << size;
      } else {
        ++local;
      }
    }
  }
  // Every branch of the formula is exercised.
  EXPECT_GT(split, 0u);
  EXPECT_GT(later, 0u);
  EXPECT_GT(global, 0u);
  EXPECT_GT(local, 0u);
}

// Plain llc-22's own ML priority advisor on its interactive channel, answered
// by an independent Python host with the recorded priorities: it declares the
// log's features and advice, and streams the recorded features for every
// query the answers cannot have influenced yet (a function's queries before
// its first requeue in stage RS_Split: the allocator's seeding, before it
// dequeues anything). The replayed allocation itself is not plain llc's:
// the float column rounds priorities above 2^24 (docs/harvest-regalloc.md).
TEST_F(RegallocPlugin, PriorityFeaturesAreWhatLlvmsOwnChannelDeclaresAndStreams) {
  for (const std::string module : {"c", "cxx"}) {
    std::string log = Work / (module + ".plog");
    mustRun(recordPriority(module + ".bc", module + ".o", module + ".plog"));
    std::string base = Work / (module + ".channel");
    mustRun("mkfifo " + quote(base + ".in") + " " + quote(base + ".out"));
    std::string replay = "timeout 120 /usr/bin/python3 " +
                         quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/replay_priority_channel.py") + " " +
                         quote(log) + " " + quote(base);
    CommandResult replayed = run("(" + replay + " > " + quote(Work / "replay.txt") + ") & " +
                                 llc(module + ".bc", module + ".replayed.o",
                                     "-regalloc=greedy -regalloc-enable-priority-advisor=release "
                                     "-regalloc-priority-interactive-channel-base=" +
                                         quote(base)) +
                                 "; status=$?; wait $! || exit 3; exit $status");
    std::string report = readFile(Work / "replay.txt");
    ASSERT_EQ(replayed.ExitCode, 0) << replayed.Err << report;
    EXPECT_NE(report.find("header: {\"features\": [{\"name\": \"li_size\", \"type\": \"int64_t\", \"port\": 0, "
                          "\"shape\": [1]}, {\"name\": \"stage\", \"type\": \"int64_t\", \"port\": 0, \"shape\": "
                          "[1]}, {\"name\": \"weight\", \"type\": \"float\", \"port\": 0, \"shape\": [1]}], "
                          "\"advice\": {\"name\": \"priority\", \"type\": \"float\", \"port\": 0, \"shape\": [1]}}"),
              std::string::npos)
        << report;

    std::map<std::string, int64_t> seeds; // each function's queries before its first stage-2 one
    std::map<std::string, bool> seeded;
    for (const LoggedObservation &o : readObservations(log)) {
      if (seeded[o.Context])
        continue;
      if (o["stage"] == 2)
        seeded[o.Context] = true;
      else
        seeds[o.Context] = o.Index + 1;
    }
    size_t checked = 0;
    std::istringstream lines(report);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("first ", 0) != 0)
        continue;
      size_t space = line.rfind(' ');
      std::string function = line.substr(6, space - 6);
      int64_t firstMismatch = std::stoll(line.substr(space + 1));
      EXPECT_GE(firstMismatch, seeds[function]) << module << " " << function << "\n" << report;
      checked += seeds[function] > 0;
    }
    EXPECT_EQ(checked, seeds.size()) << report;
  }
}

TEST_F(RegallocPlugin, BothTracesInOneCompileAreEachTracesOwn) {
  mustRun(llc("c.bc", "plain.o"));
  mustRun(record("c.bc", "e.o", "e.log"));
  mustRun(recordPriority("c.bc", "p.o", "p.log"));
  CommandResult r = run(llc("c.bc", "both.o",
                            "-load " + quote(Plugin) + " -mlgo-regalloc-log=" + quote(Work / "both.elog") +
                                " -mlgo-regalloc-priority-log=" + quote(Work / "both.plog")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(readFile(Work / "both.o"), readFile(Work / "plain.o"));
  EXPECT_EQ(readFile(Work / "both.elog"), readFile(Work / "e.log"));
  EXPECT_EQ(readFile(Work / "both.plog"), readFile(Work / "p.log"));
}

TEST_F(RegallocPlugin, PriorityTraceBadLogPathsFailCleanly) {
  // Nowhere to create the channel beside the log.
  CommandResult r = run(recordPriority("c.bc", "c.o", "missing/c.plog"));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("mlgo-regalloc: cannot create"), std::string::npos) << r.Err;
  EXPECT_EQ(r.Err.find("Stack dump"), std::string::npos) << r.Err;
  // The channel can be made but the log cannot be written (a directory).
  mustRun("mkdir -p " + quote(Work / "adir"));
  r = run(recordPriority("c.bc", "c.o", "adir"));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("mlgo-regalloc: cannot write " + (Work / "adir")), std::string::npos) << r.Err;
  EXPECT_EQ(r.Err.find("Stack dump"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "adir.channel.in"));
  // One file for both traces.
  r = run(llc("c.bc", "c.o",
              "-load " + quote(Plugin) + " -mlgo-regalloc-log=" + quote(Work / "same.log") +
                  " -mlgo-regalloc-priority-log=" + quote(Work / "same.log")));
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  EXPECT_NE(r.Err.find("name the same file"), std::string::npos) << r.Err;
  EXPECT_EQ(r.Err.find("Stack dump"), std::string::npos) << r.Err;
  // No function bodies: no query, no log.
  writeFile(Work / "nobody.c", "int only_declared(int);\nint global = 3;\n");
  mustRun(Clang + " -O2 -emit-llvm -c " + quote(Work / "nobody.c") + " -o " + quote(Work / "nobody.bc"));
  r = run(recordPriority("nobody.bc", "nobody.o", "nobody.plog"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_FALSE(exists(Work / "nobody.plog"));
}

TEST_F(RegallocPlugin, HarvestLogsRecordsDefaultPriorityTracesThroughThePlugin) {
  mustRun("mkdir -p " + quote(Work / "bc") + " && cp " + quote(Work / "c.bc") + " " + quote(Work / "cxx.bc") + " " +
          quote(Work / "bc"));
  mustRun(tool("make-corpus") + " -q --input_dir=" + quote(Work / "bc") + " --output_dir=" + quote(Work / "corpus") +
          " --default_args='-O2 -c'");
  for (const std::string compiler : {"llc", "clang"}) {
    std::string out = Work / ("out-" + compiler);
    CommandResult r =
        run(harvestCommand(Work / "corpus", out,
                           "--problem=regalloc-priority --policy=default --compiler=" + compiler + " --mode=plugin"));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    EXPECT_NE(r.Err.find("using plugin mode"), std::string::npos) << r.Err;
    auto journal = journalByModule(out);
    for (const std::string module : {"c", "cxx"}) {
      ASSERT_EQ(journal[module]["status"], "ok") << journal[module].dump();
      std::string harvested = out + "/logs/" + module + ".log";
      CommandResult valid = run(tool("training-log") + " validate " + quote(harvested));
      EXPECT_EQ(valid.ExitCode, 0) << valid.Out << valid.Err;
      std::vector<LoggedObservation> log = readObservations(harvested);
      EXPECT_GT(log.size(), 50u) << compiler << " " << module;
      ASSERT_FALSE(log.empty());
      EXPECT_NE(log[0].Features.count("priority"), 0u);
      EXPECT_EQ(journal[module]["decisions"], log.size());
      double rewards = 0;
      for (const auto &[function, score] : functionRewards(log, module))
        rewards += score;
      EXPECT_GT(rewards, 0.0) << compiler << " " << module;
      EXPECT_NEAR(journal[module]["regalloc_score"].get<double>(), rewards, 1e-3) << compiler << " " << module;
      if (compiler == "llc") {
        // The plugin's log under plain llc-22 -O2, byte for byte.
        mustRun(recordPriority(module + ".bc", module + ".o", module + ".plog"));
        EXPECT_EQ(readFile(harvested), readFile(Work / (module + ".plog"))) << module;
      }
    }
  }
  // A plugin that is not there: a clear refusal, not a crash.
  CommandResult missing =
      run(harvestCommand(Work / "corpus", Work / "none",
                         "--problem=regalloc-priority --policy=default --compiler=llc --mode=plugin --plugin_path=" +
                             quote(Work / "none.so")));
  EXPECT_EQ(missing.ExitCode, 1) << missing.Err;
  EXPECT_NE(missing.Err.find("does not exist"), std::string::npos) << missing.Err;
}

} // namespace

// -mlgo-regalloc-policy: a hosted random policy changes the allocation (the
// ML advisor's answers are taken), is seeded per module name
// (-mlgo-regalloc-module) and reproducible; specs the plugin cannot host are
// clear errors naming the flag.
TEST_F(RegallocPlugin, HostedRandomPoliciesDecideAndBadSpecsAreClearErrors) {
  std::string random = " -mlgo-regalloc-policy=random:0.5:3 -mlgo-regalloc-module=";
  mustRun(llc("c.bc", "c.plain.o"));
  for (const std::string run : {"a", "b"})
    mustRun(
        llc("c.bc", "c." + run + ".o",
            "-load " + quote(Plugin) + " -mlgo-regalloc-log=" + quote(Work / ("c." + run + ".log")) + random + "m"));
  mustRun(llc("c.bc", "c.other.o",
              "-load " + quote(Plugin) + " -mlgo-regalloc-log=" + quote(Work / "c.other.log") + random + "other"));
  EXPECT_EQ(readFile(Work / "c.a.log"), readFile(Work / "c.b.log")) << "a seeded policy is reproducible";
  EXPECT_EQ(readFile(Work / "c.a.o"), readFile(Work / "c.b.o"));
  EXPECT_NE(readFile(Work / "c.a.o"), readFile(Work / "c.plain.o")) << "random evictions change the allocation";
  EXPECT_NE(readFile(Work / "c.a.log"), readFile(Work / "c.other.log")) << "the module name seeds the stream";
  std::vector<LoggedObservation> log = readObservations(Work / "c.a.log");
  ASSERT_GT(log.size(), 20u);
  size_t kept = 0;
  for (const LoggedObservation &o : log) {
    auto column = static_cast<size_t>(o["index_to_evict"]);
    ASSERT_EQ(o.Features.at("mask").at(column), 1);
    kept += column == 32;
  }
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, log.size());

  struct Case {
    std::string Flags, Expect;
  };
  for (const Case &c : std::vector<Case>{
           {"-mlgo-regalloc-log=" + quote(Work / "e.log") + " -mlgo-regalloc-policy=exec:cat",
            "mlgo-regalloc: -mlgo-regalloc-policy=exec:cat (for -mlgo-regalloc-log): the plugin hosts default, "
            "random:P[:SEED] and tflite:DIR"},
           {"-mlgo-regalloc-log=" + quote(Work / "e.log") + " -mlgo-regalloc-policy=random:2",
            "mlgo-regalloc: -mlgo-regalloc-policy=random:2 (for -mlgo-regalloc-log): "},
           {"-mlgo-regalloc-priority-log=" + quote(Work / "e.log") +
                " -mlgo-regalloc-policy=tflite:" + quote(Work / "no-such-model"),
            "mlgo-regalloc: -mlgo-regalloc-policy=tflite:" + Work / "no-such-model" +
                " (for -mlgo-regalloc-priority-log): "},
           {"-mlgo-regalloc-policy=random:0.5",
            "mlgo-regalloc: -mlgo-regalloc-policy=random:0.5 needs -mlgo-regalloc-log or -mlgo-regalloc-priority-log"},
       }) {
    CommandResult r = run(llc("c.bc", "e.o", "-load " + quote(Plugin) + " " + c.Flags));
    EXPECT_NE(r.ExitCode, 0) << c.Flags;
    EXPECT_NE(r.Err.find(c.Expect), std::string::npos) << c.Flags << ": " << r.Err;
    EXPECT_EQ(r.Err.find("Stack dump"), std::string::npos) << r.Err;
  }
}
