// harvest-logs end to end: the real opt-22/llc-22/clang-22 on a generated
// corpus with thousands of call sites, and fake compilers only where a fault
// must be injected (crash, hang, garbage on the channel, a TFLite build).
#include "mlgo/evaluate/NativeSize.h"
#include "mlgo/log/TrainingLog.h"

#include "support/Deadline.h"
#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace mlgo;
using namespace mlgo::test;
namespace fs = std::filesystem;

namespace {

const std::string Harvest = tool("harvest-logs");
const std::string Clang = MLGO_CLANG;

// Every observation of a log: (inlining_default, inlining_decision).
std::vector<std::pair<int64_t, int64_t>> decisions(const std::string &log) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const LoggedObservation &o : readObservations(log))
    out.push_back({static_cast<int64_t>(o["inlining_default"]), static_cast<int64_t>(o["inlining_decision"])});
  return out;
}

class HarvestLogs : public InlinerCorpusSuite {
protected:
  std::string harvest(const std::string &out, const std::string &flags = "") {
    return harvestCommand(corpus(), out, flags);
  }

  // A fake opt: answers --version/--help-hidden like LLVM 22 and otherwise
  // runs `body` with $B set to the channel base.
  std::string fakeOpt(const std::string &name, const std::string &body, const std::string &version = "22.1.8",
                      const std::string &help = "") {
    return writeScript(Work / name,
                       "#!/bin/bash\n"
                       "case \"$1\" in --version) echo 'LLVM version " +
                           version + "'; exit 0;; --help-hidden) echo '" + help +
                           "'; exit 0;; esac\n"
                           "for a in \"$@\"; do case \"$a\" in -inliner-interactive-channel-base=*) B=${a#*=};; esac; "
                           "done\n" +
                           body + "\n");
  }

  TempDir Work;
};

TEST_F(HarvestLogs, DefaultPolicyReproducesTheOrdinaryInlinerByteForByte) {
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--mode=interactive --explicit_temps_dir=" + quote(Work / "temps")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("using interactive mode"), std::string::npos) << r.Err;
  size_t total = 0;
  for (int i = 1; i <= 4; ++i) {
    std::string m = "m" + std::to_string(i) + ".o";
    std::string plain = Work / (m + ".plain.bc");
    mustRun("opt-22 '-passes=default<Oz>' " + quote(corpus() + "/" + m + ".bc") + " -o " + quote(plain));
    EXPECT_EQ(readFile(Work / ("temps/" + m + "/optimized.bc")), readFile(plain)) << m;
    auto ds = decisions(out + "/logs/" + m + ".log");
    total += ds.size();
    for (auto [def, taken] : ds)
      ASSERT_EQ(def, taken) << m;
    auto j = journalByModule(out)[m];
    EXPECT_EQ(j["status"], "ok");
    EXPECT_EQ(j["decisions"], ds.size());
    EXPECT_EQ(j["streams"], 1);
    EXPECT_GT(j["native_size"].get<uint64_t>(), 0u);
    EXPECT_TRUE(j["reward"].is_null());
  }
  EXPECT_GT(total, 2000u) << "the corpus should exercise thousands of call sites";
  // The header is the compiler's features, inlining_default, then inlining_decision.
  auto reader = TrainingLogReader::open(out + "/logs/m1.o.log");
  ASSERT_TRUE(static_cast<bool>(reader));
  ASSERT_TRUE(static_cast<bool>((*reader)->next()));
  EXPECT_EQ((*reader)->header().Features.size(), 40u);
  EXPECT_EQ((*reader)->header().Features[38].Name, "inlining_default");
  EXPECT_FALSE((*reader)->header().Score.has_value());
  auto summary = nlohmann::json::parse(readFile(out + "/summary.json"));
  EXPECT_EQ(summary["modules"]["ok"], 4);
  EXPECT_EQ(summary["decisions"], total);
  std::string formats = std::string(MLGO_SOURCE_DIR) + "/corpus_formats/";
  std::string check = "/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " ";
  mustRun(check + quote(formats + "harvest_summary.schema.json") + " " + quote(out + "/summary.json"));
  mustRun(check + "--lines " + quote(formats + "harvest_journal.schema.json") + " " + quote(out + "/harvest.jsonl"));
}

TEST_F(HarvestLogs, ClangModeMatchesThePlainCompileAndLlvmSize) {
  std::string out = Work / "out";
  CommandResult r = run(harvest(out, "--compiler=clang --explicit_temps_dir=" + quote(Work / "temps")));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  for (int i = 1; i <= 4; ++i) {
    std::string m = "m" + std::to_string(i) + ".o";
    std::string cmd = readFile(corpus() + "/" + m + ".cmd");
    std::string args;
    for (size_t start = 0, nul; (nul = cmd.find('\0', start)) != std::string::npos; start = nul + 1)
      args += " " + quote(cmd.substr(start, nul - start));
    std::string plain = Work / (m + ".plain.o");
    mustRun(Clang + args + " -x ir " + quote(corpus() + "/" + m + ".bc") + " -o " + quote(plain));
    auto ours = berkeleyTextSize(Work / ("temps/" + m + "/native.o"));
    auto theirs = berkeleyTextSize(plain);
    ASSERT_TRUE(static_cast<bool>(ours) && static_cast<bool>(theirs));
    EXPECT_EQ(*ours, *theirs) << m;
    EXPECT_EQ(journalByModule(out)[m]["native_size"], *ours);
    // Our size is llvm-size's Berkeley "text" column.
    CommandResult size = run("llvm-size-22 " + quote(plain));
    std::istringstream lines(size.Out);
    std::string header, values;
    std::getline(lines, header);
    std::getline(lines, values);
    EXPECT_EQ(std::stoull(values), *theirs) << size.Out;
  }
}

TEST_F(HarvestLogs, ExecPolicyEchoingTheDefaultEqualsTheDefaultPolicy) {
  std::string policy = std::string(MLGO_SOURCE_DIR) + "/scripts/echo_default_policy.py";
  mustRun(harvest(Work / "default", "--num_workers=2"));
  CommandResult r = run(harvest(Work / "exec", "--num_workers=2 --policy=exec:" + quote("/usr/bin/python3 " + policy)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  for (int i = 1; i <= 4; ++i) {
    std::string log = "/logs/m" + std::to_string(i) + ".o.log";
    EXPECT_EQ(readFile(Work / ("exec" + log)), readFile(Work / ("default" + log))) << log;
  }
  // A non-default policy gets a reward against the cached default size.
  auto j = journalByModule(Work / "exec")["m1.o"];
  EXPECT_EQ(j["reward"], 0.0);
  EXPECT_EQ(j["default_size"], j["native_size"]);
  EXPECT_NE(readFile(Work / "exec/default_sizes.jsonl").find("\"m1.o\""), std::string::npos);
}

TEST_F(HarvestLogs, RandomPolicyIsSeededAndRewarded) {
  mustRun(harvest(Work / "a", "--policy=random:0.2:7 --modules_filter=m1"));
  mustRun(harvest(Work / "b", "--policy=random:0.2:7 --modules_filter=m1 --num_workers=1"));
  EXPECT_EQ(readFile(Work / "a/logs/m1.o.log"), readFile(Work / "b/logs/m1.o.log"));
  auto ds = decisions(Work / "a/logs/m1.o.log");
  size_t differ = 0;
  for (auto [def, taken] : ds)
    differ += def != taken;
  EXPECT_GT(differ, 0u); // the log records the decision actually taken
  auto j = journalByModule(Work / "a")["m1.o"];
  EXPECT_TRUE(j["reward"].is_number());
  EXPECT_DOUBLE_EQ(j["reward"].get<double>(),
                   1 - (j["native_size"].get<double>() + 0.01) / (j["default_size"].get<double>() + 0.01));
}

TEST_F(HarvestLogs, MisbehavingCompilersAreKilledAndReported) {
  struct Case {
    const char *Name, *Body, *Status, *Reason;
  } cases[] = {
      {"crash", "kill -SEGV $$", "failed", "compiler_failed"},
      {"never-opens", "sleep 100", "timeout", "timeout"},
      {"opens-then-hangs", "exec 3<\"$B.in\" 4>\"$B.out\"; sleep 100", "timeout", "timeout"},
      {"closes-early", "exec 3<\"$B.in\" 4>\"$B.out\"; exec 3<&- 4>&-; exit 0", "failed", "protocol_error"},
      {"garbage", "exec 3<\"$B.in\" 4>\"$B.out\"; echo 'not a header' >&4; sleep 100", "failed", "protocol_error"},
      {"exits-1", "echo 'error: something' >&2; exit 1", "failed", "compiler_failed"},
  };
  for (const Case &c : cases) {
    std::string opt = fakeOpt(c.Name, c.Body);
    std::string out = Work / (std::string(c.Name) + "-out");
    auto start = std::chrono::steady_clock::now();
    CommandResult r =
        run(harvest(out, "--mode=interactive --opt_path=" + quote(opt) + " --compilation_timeout=2 --num_workers=2"));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.ExitCode, 0) << c.Name << r.Err;
    EXPECT_LT(seconds, 12) << c.Name;
    auto j = journalByModule(out);
    ASSERT_EQ(j.size(), 4u) << c.Name;
    EXPECT_EQ(j["m1.o"]["status"], c.Status) << c.Name << j["m1.o"].dump();
    EXPECT_EQ(j["m1.o"]["reason"], c.Reason) << c.Name << j["m1.o"].dump();
    EXPECT_FALSE(exists(out + "/logs/m1.o.log")) << c.Name;
    if (std::string(c.Name) == "garbage") {
      EXPECT_LT(j["m1.o"]["seconds"].get<double>(), 1.5); // killed at once, not at the timeout
    }
    if (std::string(c.Name) == "crash") {
      EXPECT_EQ(j["m1.o"]["exit_status"], "signal 11 (Segmentation fault)");
    }
    if (std::string(c.Name) == "exits-1") {
      EXPECT_NE(j["m1.o"]["stderr_tail"].get<std::string>().find("error: something"), std::string::npos);
    }
    EXPECT_EQ(processesMentioning(opt), 0u) << c.Name << ": a compiler survived";
    mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") + " --lines " +
            quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/harvest_journal.schema.json") + " " +
            quote(out + "/harvest.jsonl"));
  }
}

TEST_F(HarvestLogs, ExecPoliciesThatDieOrAnswerShortAreReported) {
  std::string dies = writeScript(Work / "dies.sh", "#!/bin/sh\nexit 0\n");
  std::string shortAnswer =
      writeScript(Work / "short.sh", "#!/bin/sh\nhead -c 2800 >/dev/null; printf 'abc'; exit 0\n");
  CommandResult r = run(harvest(Work / "dies", "--modules_filter=m1 --compilation_timeout=10 --policy=exec:" + dies));
  EXPECT_EQ(r.ExitCode, 0) << r.Err;
  auto j = journalByModule(Work / "dies")["m1.o"];
  EXPECT_EQ(j["reason"], "policy_error") << j.dump();
  r = run(harvest(Work / "short", "--modules_filter=m1 --compilation_timeout=10 --policy=exec:" + shortAnswer));
  j = journalByModule(Work / "short")["m1.o"];
  EXPECT_EQ(j["reason"], "policy_error") << j.dump();
  EXPECT_NE(j["detail"].get<std::string>().find("3 of the 8 reply bytes"), std::string::npos) << j.dump();
  EXPECT_LT(j["seconds"].get<double>(), 5);
}

TEST_F(HarvestLogs, ResumeSkipsDoneModulesAndKillNineLeavesNoTornFiles) {
  std::string clean = Work / "clean";
  mustRun(harvest(clean, "--num_workers=1"));
  std::string out = Work / "out";
  CommandResult again = run(harvest(clean, "--num_workers=1"));
  EXPECT_NE(again.Err.find("resuming: 4 of 4 modules are already done"), std::string::npos) << again.Err;
  EXPECT_NE(run(harvest(clean, "--force --num_workers=1")).Err.find("4 of 4 modules ok"), std::string::npos);

  // Kill -9 once the first module is journaled, then run again.
  // Up to a minute: the first module (the largest) is slow on a loaded machine.
  int status = killNineOnceJournaled(harvest(out, "--num_workers=1"), out, std::chrono::milliseconds(10));
  ASSERT_TRUE(WIFSIGNALED(status));
  size_t doneBefore = harvestJournal(out).size();
  EXPECT_GE(doneBefore, 1u);
  EXPECT_LT(doneBefore, 4u);
  EXPECT_TRUE(waitUntil([&] { return processesMentioning(out) == 0; }, std::chrono::seconds(10),
                        "the killed run's compilers to end"))
      << "the killed run's compilers must die with it";
  CommandResult resumed = run(harvest(out, "--num_workers=1"));
  ASSERT_EQ(resumed.ExitCode, 0) << resumed.Err;
  EXPECT_NE(resumed.Err.find("resuming: " + std::to_string(doneBefore)), std::string::npos) << resumed.Err;
  EXPECT_EQ(listTree(out + "/logs"), listTree(clean + "/logs"));
  for (const std::string &f : listTree(clean + "/logs"))
    EXPECT_EQ(readFile(out + "/logs/" + f), readFile(clean + "/logs/" + f)) << f;
  auto a = harvestJournalWithoutSeconds(out), b = harvestJournalWithoutSeconds(clean);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i], b[i]);
}

// Killed (by the MLGO_KILL_BEFORE_RENAME seam) right after the temporary of
// its compacted journal or of summary.json is written and before its rename:
// the temporary is left, as a kill -9 landing there leaves it, and the next
// run, holding OUT's lock, removes it (issue #44, finding 6). OUT then holds
// exactly what a clean run's holds, state directory included; names like a
// temporary that are not one of harvest-logs' own files (a module's log's)
// stay.
TEST_F(HarvestLogs, KilledBeforeARenameThenTheNextRunRemovesTheTemporary) {
  std::string clean = Work / "clean";
  mustRun(harvest(clean, "--num_workers=1"));
  const std::set<std::string> cleanTree = listTree(clean, true);
  ASSERT_TRUE(cleanTree.count(".mlgo-harvest/lock")) << "the state directory is compared too";
  for (const std::string name : {"harvest.jsonl", "summary.json"}) {
    std::string out = Work / ("out-" + name);
    CommandResult killed = run("MLGO_KILL_BEFORE_RENAME=" + name + " " + harvest(out, "--num_workers=1"));
    ASSERT_EQ(killed.ExitCode, 128 + SIGKILL) << name << ": " << killed.Err;
    EXPECT_TRUE(waitUntil([&] { return processesMentioning(out) == 0; }, std::chrono::seconds(10),
                          "the killed run's compilers to end"));
    std::vector<std::string> temporaries;
    for (const std::string &f : listTree(out, true))
      if (f.rfind(name + ".tmp.", 0) == 0)
        temporaries.push_back(f);
    ASSERT_EQ(temporaries.size(), 1u) << name << ": the seam must leave the temporary";
    writeFile(out + "/notes.json.tmp.1.2", "the user's\n");
    writeFile(out + "/logs/m9.log.tmp.1.2", "a module's\n");

    CommandResult resumed = run(harvest(out, "--num_workers=1"));
    ASSERT_EQ(resumed.ExitCode, 0) << name << ": " << resumed.Err;
    EXPECT_NE(resumed.Err.find("removed " + out + "/" + temporaries[0] + ", a temporary left by a run that died"),
              std::string::npos)
        << resumed.Err;
    EXPECT_NE(resumed.Err.find("resuming: 4 of 4 modules are already done"), std::string::npos) << resumed.Err;
    EXPECT_EQ(readFile(out + "/notes.json.tmp.1.2"), "the user's\n");
    EXPECT_EQ(readFile(out + "/logs/m9.log.tmp.1.2"), "a module's\n");
    fs::remove(out + "/notes.json.tmp.1.2");
    fs::remove(out + "/logs/m9.log.tmp.1.2");
    EXPECT_EQ(listTree(out, true), cleanTree) << name;
    for (const std::string &f : listTree(clean + "/logs"))
      EXPECT_EQ(readFile(out + "/logs/" + f), readFile(clean + "/logs/" + f)) << f << " after a kill at " << name;
    EXPECT_EQ(harvestJournalWithoutSeconds(out), harvestJournalWithoutSeconds(clean)) << name;
  }
}

TEST_F(HarvestLogs, SigintStopsCleanlyAndSaysHowToResume) {
  // The real opt for the first two modules, then one that hangs: the signal
  // arrives with two modules done and one in flight.
  std::string count = Work / "count";
  std::string opt =
      fakeOpt("third-hangs", "n=$(cat " + quote(count) + " 2>/dev/null || echo 0); echo $((n+1)) >" + quote(count) +
                                 "; [ \"$n\" -ge 2 ] && exec sleep 100; exec opt-22 \"$@\"");
  std::string out = Work / "out";
  TempDir capture;
  // A process group of its own, as a shell's job: Ctrl-C signals all of it.
  BackgroundCommand harvesting(harvest(out, "--mode=interactive --num_workers=1 --opt_path=" + quote(opt) +
                                                " --compilation_timeout=60" +
                                                " --compiler_writable_dir=" + quote(Work.path())), // the fake's counter
                               capture / "err");
  ASSERT_TRUE(waitUntil([&] { return harvestJournal(out).size() >= 2 && readFile(count) == "3\n"; }, GenerousDeadline,
                        "two modules journaled and the third compile started"))
      << readFile(capture / "err");
  ASSERT_EQ(harvestJournal(out).size(), 2u) << readFile(capture / "err");
  // The harvester waits for the third compile (the wrapper has become `sleep 100`).
  ASSERT_TRUE(waitUntil(
      [&] {
        for (const std::string &child : childCommandLines(harvesting.pid()))
          if (child.rfind("sleep 100", 0) == 0)
            return true;
        return false;
      },
      GenerousDeadline, "the third compile to be running"));
  auto start = std::chrono::steady_clock::now();
  harvesting.signal(SIGINT, /*group=*/true);
  int status = 0;
  ASSERT_TRUE(harvesting.wait(GenerousDeadline, status)) << readFile(capture / "err");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_NE(readFile(capture / "err").find("Run the same command again to resume"), std::string::npos)
      << readFile(capture / "err");
  // The two finished modules are recorded with their logs; the interrupted
  // one is not recorded at all (not as a failure): it is redone on resume.
  auto done = journalByModule(out);
  ASSERT_EQ(done.size(), 2u) << readFile(out + "/harvest.jsonl");
  for (auto &[module, line] : done) {
    EXPECT_EQ(line["status"], "ok") << line.dump();
    EXPECT_EQ(decisions(out + "/logs/" + module + ".log").size(), line["decisions"].get<size_t>()) << module;
  }
  EXPECT_EQ(listTree(out + "/logs").size(), 2u);
  auto summary = nlohmann::json::parse(readFile(out + "/summary.json"));
  EXPECT_TRUE(summary["interrupted"].get<bool>());
  EXPECT_EQ(summary["modules"]["ok"], 2);
  EXPECT_EQ(processesMentioning(opt), 0u);
  // Resume with the same options (the journal refuses others); the wrapper
  // counts afresh, so it runs the real opt for the two modules left.
  writeFile(count, "0\n");
  CommandResult resumed =
      run(harvest(out, "--mode=interactive --num_workers=1 --opt_path=" + quote(opt) + " --compilation_timeout=60"));
  EXPECT_EQ(resumed.ExitCode, 0) << resumed.Err;
  EXPECT_NE(resumed.Err.find("resuming: 2 of 4 modules are already done"), std::string::npos) << resumed.Err;
  EXPECT_EQ(harvestJournal(out).size(), 4u);
}

TEST_F(HarvestLogs, DevelopmentModeWithAFakeTFLiteCompiler) {
  // No TFLite LLVM exists on Debian: this fake writes a prepared log where
  // -training-log says, and copies the module to -o so the real llc runs.
  LogHeader header;
  header.Features = {{"callee_users", ElementType::Int64, {1}, 0},
                     {"inlining_default", ElementType::Int64, {1}, 0},
                     {"inlining_decision", ElementType::Int64, {1}, 0}};
  std::string prepared;
  {
    llvm::raw_string_ostream os(prepared);
    TrainingLogWriter writer(os, header);
    writer.switchContext("");
    int64_t v = 1;
    llvm::StringRef b(reinterpret_cast<const char *>(&v), 8);
    ASSERT_FALSE(static_cast<bool>(writer.observation({b, b, b})));
  }
  writeFile(Work / "prepared.log", prepared);
  std::string opt =
      fakeOpt("dev-opt",
              "echo \"$@\" >> " + quote(Work / "argv") +
                  "\n"
                  "for a in \"$@\"; do case \"$a\" in -training-log=*) L=${a#*=};; esac; done\n"
                  "while [ $# -gt 0 ]; do case \"$1\" in -o) O=$2; shift;; *.bc) I=$1;; esac; shift; done\n"
                  "cp " +
                  quote(Work / "prepared.log") + " \"$L\" && cp \"$I\" \"$O\"",
              "22.1.8", "  -training-log=<string> - Path where the development-mode inlining log is saved.");
  std::string out = Work / "out";
  // The fake records its argv outside its work directory: allowed explicitly.
  std::string writable = " --compiler_writable_dir=" + quote(Work.path());
  CommandResult r =
      run(harvest(out, "--opt_path=" + quote(opt) + " --modules_filter=m1 --policy=model:/models/inl" + writable));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_NE(r.Err.find("with development mode; using development mode"), std::string::npos) << r.Err;
  EXPECT_EQ(readFile(out + "/logs/m1.o.log"), prepared);
  EXPECT_EQ(journalByModule(out)["m1.o"]["decisions"], 1);
  std::string argv = readFile(Work / "argv");
  EXPECT_NE(argv.find("-enable-ml-inliner=development"), std::string::npos) << argv;
  EXPECT_NE(argv.find("-ml-inliner-model-under-training=/models/inl"), std::string::npos) << argv;

  // An ok module whose log has gone is not done: it is compiled again.
  fs::remove(out + "/logs/m1.o.log");
  r = run(harvest(out, "--opt_path=" + quote(opt) + " --modules_filter=m1 --policy=model:/models/inl" + writable));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(r.Err.find("resuming:"), std::string::npos) << r.Err;
  EXPECT_EQ(readFile(out + "/logs/m1.o.log"), prepared);

  // A corrupt -training-log fails the module with the reader's reason.
  writeFile(Work / "prepared.log", prepared.substr(0, prepared.size() - 5));
  mustRun(harvest(Work / "bad", "--opt_path=" + quote(opt) + " --modules_filter=m1" + writable));
  EXPECT_EQ(journalByModule(Work / "bad")["m1.o"]["reason"], "bad_training_log");
}

TEST_F(HarvestLogs, RefusesWhatCannotWork) {
  std::string old = fakeOpt("opt-19", "exit 0", "19.1.7");
  CommandResult r = run(harvest(Work / "o", "--opt_path=" + quote(old)));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("use LLVM 21 or later"), std::string::npos) << r.Err;
  r = run(harvest(Work / "o", "--policy=model:/m"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("needs a development-mode (TFLite) LLVM"), std::string::npos) << r.Err;
  r = run(harvest(Work / "o", "--mode=development"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("has no development mode"), std::string::npos) << r.Err;
  EXPECT_EQ(run(harvest(Work / "o", "--policy=random:2")).ExitCode, 2);
  EXPECT_EQ(run(harvest(Work / "o", "--shard=3/2")).ExitCode, 2);
  EXPECT_EQ(run(harvest(Work / "o", "--opt_path=/nonexistent/opt")).ExitCode, 1);
  EXPECT_EQ(run(Harvest + " --corpus=" + quote(Work / "nowhere") + " --output_dir=" + quote(Work / "o")).ExitCode, 1);
  // A module name that climbs out of the corpus would write outside --output_dir.
  writeFile(Work / "evil/corpus_description.json", R"({"has_thinlto": false, "modules": ["../escape"]})");
  writeFile(Work / "escape.bc", readFile(corpus() + "/m1.o.bc"));
  r = run(Harvest + " --corpus=" + quote(Work / "evil") + " --output_dir=" + quote(Work / "evil-out"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("module name '../escape' leaves the corpus"), std::string::npos) << r.Err;
  EXPECT_FALSE(exists(Work / "escape.log"));
}

TEST_F(HarvestLogs, SelectionShardsAndDataset) {
  mustRun(harvest(Work / "s0", "--shard=0/2"));
  mustRun("SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 " + harvest(Work / "s1", "--shard=auto"));
  auto s0 = journalByModule(Work / "s0"), s1 = journalByModule(Work / "s1");
  EXPECT_EQ(s0.size(), 2u);
  EXPECT_EQ(s1.size(), 2u);
  for (auto &[m, j] : s0)
    EXPECT_EQ(s1.count(m), 0u) << m;
  // Largest first, dealt round-robin: shard 0 takes the 1st and 3rd largest.
  // (The journal lists modules as they finish, so check the set, not the order.)
  EXPECT_EQ(s0.count("m4.o"), 1u);
  EXPECT_EQ(s0.count("m2.o"), 1u);

  mustRun(harvest(Work / "f", "--modules_filter=m[34] --tfrecord=" + quote(Work / "f/trace.tfrecord")));
  EXPECT_EQ(journalByModule(Work / "f").size(), 2u);
  CommandResult decoded =
      run("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/decode_sequence_examples.py") + " " +
          quote(Work / "f/trace.tfrecord"));
  ASSERT_EQ(decoded.ExitCode, 0) << decoded.Err;
  auto records = nlohmann::json::parse(decoded.Out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["inlining_decision"].size(), journalByModule(Work / "f")["m4.o"]["decisions"].get<size_t>());
  EXPECT_EQ(records[0]["reward"][0][0], 0.0);

  mustRun(harvest(Work / "sample", "--sampling_rate=0.5 --seed=3"));
  EXPECT_EQ(journalByModule(Work / "sample").size(), 2u);
}

// The journal describes every log in the directory, whatever the selection
// of the last run; a run with other options refuses the directory.
TEST_F(HarvestLogs, JournalKeepsEverySelectionAndRefusesOtherOptions) {
  std::string out = Work / "out";
  mustRun(harvest(out, "--modules_filter=m1"));
  mustRun(harvest(out, "--modules_filter=m2"));
  auto j = journalByModule(out);
  EXPECT_EQ(j.size(), 2u);
  EXPECT_EQ(j["m1.o"]["status"], "ok");
  EXPECT_EQ(j["m2.o"]["status"], "ok");
  EXPECT_EQ(listTree(out + "/logs"), (std::set<std::string>{"m1.o.log", "m2.o.log"}));
  CommandResult again = run(harvest(out, "--modules_filter=m1"));
  ASSERT_EQ(again.ExitCode, 0) << again.Err;
  EXPECT_NE(again.Err.find("resuming: 1 of 1 modules are already done"), std::string::npos) << again.Err;

  std::string before = readFile(out + "/harvest.jsonl");
  CommandResult other = run(harvest(out, "--modules_filter=m1 --policy=random:0.5"));
  EXPECT_EQ(other.ExitCode, 1);
  EXPECT_NE(other.Err.find("cannot resume from " + out + "/harvest.jsonl"), std::string::npos) << other.Err;
  EXPECT_NE(other.Err.find("--policy was \"default\", now \"random:"), std::string::npos) << other.Err;
  other = run(harvest(out, "'--passes=default<O2>' --force"));
  EXPECT_EQ(other.ExitCode, 1);
  EXPECT_NE(other.Err.find("--passes was \"default<Oz>\", now \"default<O2>\""), std::string::npos) << other.Err;
  EXPECT_EQ(readFile(out + "/harvest.jsonl"), before);
}

} // namespace
