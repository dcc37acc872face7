// libMLGORegAllocAdvisor.so inside the real llc-22: it records the default
// eviction advisor's decisions with LLVM's own features and score, and leaves
// the allocation exactly as plain llc's.
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

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

} // namespace
