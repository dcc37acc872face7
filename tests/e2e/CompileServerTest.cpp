// harvest-logs --compile_server: the real opt-22/llc-22 code run in warm
// children of mlgo-compile-server must write what the exec'd tools write,
// byte for byte, and a child or server that dies must cost only its module.
#include "support/Deadline.h"
#include "support/FixtureSources.h"
#include "support/HarvestCorpus.h"
#include "support/Strace.h"
#include "support/TestSupport.h"

#include "mlgo/compile/CompileServerClient.h"

#include "llvm/Config/llvm-config.h"

#include <gtest/gtest.h>

#include <sstream>

#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <set>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace mlgo::test;

namespace {

std::string server() { return std::string(MLGO_BIN_DIR) + "/../lib/mlgo-corpus/mlgo-compile-server"; }

// Every regular file below `dir` (relative path -> bytes), work-directory
// stderr files excepted (they name the directory).
std::map<std::string, std::string> outputs(const std::string &dir) {
  std::map<std::string, std::string> files;
  for (const auto &entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() != ".stderr")
      files[fs::relative(entry.path(), dir).string()] = readFile(entry.path().string());
  return files;
}

void expectSameOutputs(const std::string &a, const std::string &b) {
  auto left = outputs(a), right = outputs(b);
  ASSERT_FALSE(left.empty()) << a;
  EXPECT_EQ(left.size(), right.size());
  for (const auto &[path, bytes] : left) {
    auto it = right.find(path);
    ASSERT_NE(it, right.end()) << path << " only in " << a;
    EXPECT_TRUE(bytes == it->second) << path << " differs between " << a << " and " << b;
  }
}

// The pids of running compile servers started from the executable `path`
// (each test runs its own copy, so that tests running in parallel never see
// each other's servers): their children rename themselves at once (to
// opt-22 or llc-22), the server keeps its name.
std::vector<pid_t> runningServers(const std::string &path) {
  std::vector<pid_t> pids;
  DIR *proc = ::opendir("/proc");
  if (!proc)
    return pids;
  std::string target = fs::weakly_canonical(path).string();
  while (dirent *entry = ::readdir(proc)) {
    pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0)
      continue;
    std::error_code ec;
    std::string dir = "/proc/" + std::string(entry->d_name);
    if (fs::read_symlink(dir + "/exe", ec).string() != target || ec)
      continue;
    if (readFile(dir + "/comm") == "mlgo-compile-se\n")
      pids.push_back(pid);
  }
  ::closedir(proc);
  return pids;
}

// The compile children a traced harvest named `tool` (each takes its tool's
// name with prctl before anything else).
size_t childrenNamed(const TraceResult &t, const std::string &tool) {
  size_t named = 0;
  for (const TracedCall &c : t.Calls)
    named += c.Name == "prctl" && c.Args.size() >= 2 && c.Args[0] == "PR_SET_NAME" && c.Args[1] == "\"" + tool + "\"";
  return named;
}

// A copy of the server for one test (see runningServers).
std::string ownServer(const std::string &dir) {
  fs::create_directories(dir);
  std::string copy = dir + "/mlgo-compile-server";
  fs::copy_file(server(), copy, fs::copy_options::overwrite_existing);
  // The tool libraries it loads from beside itself.
  for (const char *library : {"libMLGOOptLlc.so", "libMLGOClangCc1.so"})
    fs::create_symlink(fs::path(server()).parent_path() / library, fs::path(dir) / library);
  return copy;
}

class CompileServer : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Fixture = new TempDir();
    makeHarvestCorpus(Fixture->path(), 8);
    // C++: templates make many small functions and dense inlining decisions.
    std::vector<std::pair<std::string, std::string>> sources;
    for (int i = 0; i < 3; ++i) {
      std::string s = "template <int N> struct Fib { static int get(int x) { return Fib<N - 1>::get(x + " +
                      std::to_string(i + 1) +
                      ") + Fib<N - 2>::get(x * 3); } };\n"
                      "template <> struct Fib<1> { static int get(int x) { return x ^ 7; } };\n"
                      "template <> struct Fib<0> { static int get(int x) { return x + 1; } };\n"
                      "int run" +
                      std::to_string(i) + "(int x) { return Fib<" + std::to_string(12 + i) + ">::get(x); }\n";
      sources.emplace_back("cxx" + std::to_string(i), s);
    }
    makeEmbeddedBitcodeCorpus(Fixture->path(), sources, "-x c++ -Oz", ObjectListing::Directory, "cxx-");
    // Opt's child compiles small modules on: one module above its bound
    // (64 KiB of bitcode) beside a small one.
    std::string big;
    for (int k = 0; k < 200; ++k)
      big += "static int h" + std::to_string(k) + "(int x) { return x * " + std::to_string(k + 3) + " + (x >> " +
             std::to_string(k % 7 + 1) + "); }\nint f" + std::to_string(k) +
             "(int x) { int s = 0; for (int i = 0; i < x; ++i) s += h" + std::to_string(k) + "(i) ^ " +
             (k ? "f" + std::to_string(k - 1) + "(x - 1)" : std::string("x")) + "; return s; }\n";
    makeEmbeddedBitcodeCorpus(
        Fixture->path(),
        {{"big", big}, {"small", "static int h(int x) { return x + 1; }\nint f(int x) { return h(x); }\n"}},
        "-Oz -Xclang -disable-llvm-passes", ObjectListing::Directory, "big-");
    // Regalloc on optimized IR through --compiler=llc.
    fs::create_directories(*Fixture / "regalloc-bc");
    for (int i = 0; i < 2; ++i) {
      std::string c = *Fixture / ("regalloc-src/r" + std::to_string(i) + ".c");
      writeFile(c, pressureFunction("pressure" + std::to_string(i), 24 + 6 * i));
      mustRun(std::string(MLGO_CLANG) + " -O2 -c -emit-llvm " + quote(c) + " -o " +
              quote(*Fixture / ("regalloc-bc/r" + std::to_string(i) + ".bc")));
    }
    mustRun(tool("make-corpus") + " -q --input_dir=" + quote(*Fixture / "regalloc-bc") +
            " --output_dir=" + quote(*Fixture / "regalloc-corpus"));
    // Regalloc through clang's cc1: embedded -O2 command lines.
    makeEmbeddedBitcodeCorpus(
        Fixture->path(),
        {{"rp0", pressureFunction("p0", 24) + pressureFunction("q0", 32)}, {"rp1", pressureFunction("p1", 28)}}, "-O2",
        ObjectListing::Directory, "regalloc-clang-");
  }
  static void TearDownTestSuite() {
    delete Fixture;
    Fixture = nullptr;
  }
  static std::string corpus(const std::string &name = "corpus") { return *Fixture / name; }

  // Harvests `corpusDir` with and without the server, keeping the work
  // directories, and checks that logs, outputs and journal are the same.
  void expectServerEqualsExec(const std::string &corpusDir, const std::string &flags, const std::string &name) {
    std::string on = Work / (name + "-on"), off = Work / (name + "-off");
    for (const auto &[out, setting] : {std::pair{on, "on"}, std::pair{off, "off"}}) {
      // One work directory path for both: clang embeds its command line,
      // which names the training log in it, into the object.
      std::string work = Work / "work";
      CommandResult r = run(harvestCommand(
          corpusDir, out, flags + " --compile_server=" + setting + " --explicit_temps_dir=" + quote(work)));
      ASSERT_EQ(r.ExitCode, 0) << name << " " << setting << ": " << r.Err;
      EXPECT_EQ(harvestSummary(out)["compile_server"]["used"], std::string(setting) == "on") << r.Err;
      fs::rename(work, out + "-work");
    }
    expectSameLogs(on, off);
    expectSameOutputs(on + "-work", off + "-work");
    EXPECT_EQ(journalWithoutTimings(on), journalWithoutTimings(off)) << name;
    auto journal = journalByModule(on);
    for (const auto &[module, record] : journal)
      EXPECT_EQ(record["status"], "ok") << name << " " << record.dump();
  }

  static TempDir *Fixture;
  TempDir Work;
};

TempDir *CompileServer::Fixture = nullptr;

TEST_F(CompileServer, PluginModeEqualsTheExecPathOnACCorpus) {
  expectServerEqualsExec(corpus(), "--mode=plugin --num_workers=2", "c-plugin");
  // The random policy decides in the plugin and is rewarded against the
  // default inliner's size: baseline compiles go through the server too.
  expectServerEqualsExec(corpus(), "--mode=plugin --policy=random:0.4:7 --num_workers=2", "c-random");
}

TEST_F(CompileServer, InteractiveModeEqualsTheExecPathOnACxxCorpus) {
  expectServerEqualsExec(corpus("cxx-corpus"), "--mode=interactive --num_workers=2", "cxx-interactive");
  auto journal = journalByModule(Work / "cxx-interactive-on");
  size_t decisions = 0;
  for (const auto &[module, record] : journal)
    decisions += record["decisions"].get<size_t>();
  EXPECT_GT(decisions, 20u);
}

TEST_F(CompileServer, RegallocThroughLlcEqualsTheExecPath) {
  expectServerEqualsExec(corpus("regalloc-corpus"),
                         "--problem=regalloc-evict --compiler=llc --policy=random:0.5 --num_workers=2", "regalloc");
  auto journal = journalByModule(Work / "regalloc-on");
  for (const auto &[module, record] : journal)
    EXPECT_GT(record["decisions"].get<int>(), 10) << record.dump();
  // The rewards come from the allocator's remarks, which the server's llc writes.
  EXPECT_FALSE(readFile(Work / "regalloc-on-work/r0/regalloc-remarks.yaml").empty());
  // The priority advisor likewise.
  expectServerEqualsExec(corpus("regalloc-corpus"),
                         "--problem=regalloc-priority --compiler=llc --policy=random:1:3 --num_workers=2", "priority");
  for (const auto &[module, record] : journalByModule(Work / "priority-on"))
    EXPECT_GT(record["decisions"].get<int>(), 10) << record.dump();
}

// The regalloc plugin's default traces (-load libMLGORegAllocAdvisor.so
// -mlgo-regalloc-log=L or -mlgo-regalloc-priority-log=L) in the server's llc
// and clang cc1 children: logs, objects and records are the exec'd tools'.
TEST_F(CompileServer, RegallocPluginDefaultTracesEqualTheExecPath) {
  struct Case {
    std::string Corpus, Flags, Name;
  };
  const std::vector<Case> cases = {
      {corpus("regalloc-corpus"), "--compiler=llc --problem=regalloc-evict", "llc-evict"},
      {corpus("regalloc-corpus"), "--compiler=llc --problem=regalloc-priority", "llc-priority"},
      {corpus("regalloc-clang-corpus"), "--compiler=clang --problem=regalloc-evict", "clang-evict"},
      {corpus("regalloc-clang-corpus"), "--compiler=clang --problem=regalloc-priority", "clang-priority"},
  };
  for (const Case &c : cases) {
    expectServerEqualsExec(c.Corpus, c.Flags + " --policy=default --mode=plugin --num_workers=2", c.Name);
    std::string on = Work / (c.Name + "-on");
    EXPECT_EQ(harvestSummary(on)["mode"], "plugin") << c.Name;
    EXPECT_EQ(harvestSummary(on)["compile_server"]["reason"], "--compile_server=on") << c.Name;
    for (const auto &[module, record] : journalByModule(on)) {
      EXPECT_GT(record["decisions"].get<int>(), 10) << c.Name << " " << record.dump();
      EXPECT_GT(record["native_size"].get<long>(), 0) << c.Name << " " << record.dump();
      EXPECT_GT(record["regalloc_score"].get<double>(), 0.0) << c.Name << " " << record.dump();
    }
    // The server's stderr: nothing (e.g. no warning about an inliner policy).
    for (const auto &entry : fs::directory_iterator(on + "/.mlgo-harvest"))
      if (entry.path().filename().string().starts_with("compile-server."))
        EXPECT_EQ(readFile(entry.path().string()), "") << entry.path();
  }
  // auto takes the server for the plugin too, and says why.
  CommandResult r = run(harvestCommand(corpus("regalloc-corpus"), Work / "auto",
                                       "--compiler=llc --problem=regalloc-evict --policy=default --mode=plugin"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto summary = harvestSummary(Work / "auto");
  EXPECT_EQ(summary["compile_server"]["used"], true) << summary.dump();
  EXPECT_NE(r.Err.find("compile server: on"), std::string::npos) << r.Err;
}

// One server (the plugin preloaded, as harvest-logs starts it) serves
// compiles of r1 with the eviction log, then of r0 with neither log and
// with the priority log: each child parses its own options, so nothing of
// one compile reaches the next (the eviction log is not rewritten with r0's
// trace, no log is written where none was asked for), and each output is
// what the exec'd llc-22 writes.
TEST_F(CompileServer, RegallocPluginOptionsAreEachCompilesOwn) {
  std::string plugin = std::string(MLGO_BIN_DIR) + "/../lib/mlgo-corpus/libMLGORegAllocAdvisor.so";
  std::string r0 = corpus("regalloc-corpus") + "/r0.bc", r1 = corpus("regalloc-corpus") + "/r1.bc";
  ASSERT_TRUE(fs::exists(r0) && fs::exists(r1));
  mlgo::CompileServerClient client({server(), {plugin}, "", Work / "server.stderr"});
  auto compile = [&](const std::string &name, const std::string &bitcode, std::vector<std::string> flags) {
    mlgo::SpawnOptions options;
    options.Argv = {"/usr/lib/llvm-22/bin/llc", "-O2", "-filetype=obj", bitcode, "-o", Work / (name + ".o")};
    options.Argv.insert(options.Argv.end(), flags.begin(), flags.end());
    options.StderrPath = Work / (name + ".stderr");
    auto child = client.spawn("llc", options);
    ASSERT_TRUE(bool(child)) << llvm::toString(child.takeError());
    EXPECT_TRUE(child->wait().ok()) << readFile(Work / (name + ".stderr"));
  };
  auto exec = [&](const std::string &name, const std::string &bitcode, const std::string &flags) {
    mustRun("llc-22 -O2 -filetype=obj " + quote(bitcode) + " -o " + quote(Work / (name + ".o")) + " " + flags);
  };
  std::string evictLog = Work / "evict.log", priorityLog = Work / "priority.log";
  compile("evict", r1, {"-load", plugin, "-mlgo-regalloc-log=" + evictLog});
  ASSERT_TRUE(fs::exists(evictLog)) << readFile(Work / "evict.stderr");
  std::string evictBytes = readFile(evictLog);
  compile("none", r0, {"-load", plugin});
  compile("priority", r0, {"-load", plugin, "-mlgo-regalloc-priority-log=" + priorityLog});
  ASSERT_TRUE(fs::exists(priorityLog)) << readFile(Work / "priority.stderr");
  EXPECT_TRUE(readFile(evictLog) == evictBytes) << "a later compile rewrote the eviction log";
  EXPECT_EQ(client.starts(), 1u);
  exec("plain0", r0, "");
  exec("plain1", r1, "");
  exec("exec-evict", r1, "-load " + quote(plugin) + " -mlgo-regalloc-log=" + quote(Work / "exec-evict.log"));
  exec("exec-priority", r0,
       "-load " + quote(plugin) + " -mlgo-regalloc-priority-log=" + quote(Work / "exec-priority.log"));
  EXPECT_TRUE(readFile(Work / "exec-evict.log") == evictBytes);
  EXPECT_TRUE(readFile(Work / "exec-priority.log") == readFile(priorityLog));
  EXPECT_TRUE(readFile(Work / "evict.o") == readFile(Work / "plain1.o"));
  EXPECT_TRUE(readFile(Work / "none.o") == readFile(Work / "plain0.o"));
  EXPECT_TRUE(readFile(Work / "priority.o") == readFile(Work / "plain0.o"));
  const std::set<std::string> asked{"evict.log", "priority.log", "exec-evict.log", "exec-priority.log"};
  for (const auto &entry : fs::directory_iterator(Work.path()))
    if (entry.path().extension() == ".log")
      EXPECT_TRUE(asked.count(entry.path().filename())) << entry.path() << ": a log no compile asked for";
  EXPECT_EQ(readFile(Work / "server.stderr"), "");
}

// clang's cc1 runs in the children of a server started with --tools=clang:
// objects (embedded command line included), logs and records are the
// exec'd clang-22's, in plugin and interactive mode; a driver command line
// is exec'd by the child and equal too.
TEST_F(CompileServer, ClangCc1EqualsTheExecPath) {
  expectServerEqualsExec(corpus("cxx-corpus"), "--compiler=clang --mode=plugin", "clang-plugin");
  expectServerEqualsExec(corpus("cxx-corpus"), "--compiler=clang --mode=interactive", "clang-interactive");
  // A driver command line (make-corpus --default_args): exec'd by the child.
  std::string driverCorpus = Work / "driver-corpus";
  mustRun(tool("make-corpus") + " -q --input_dir=" + quote(*Fixture / "bc") + " --output_dir=" + quote(driverCorpus) +
          " --default_args='-c -Oz'");
  expectServerEqualsExec(driverCorpus, "--compiler=clang --modules_filter=m[01]", "clang-driver");
  std::string reason = harvestSummary(Work / "clang-plugin-on")["compile_server"]["reason"];
  EXPECT_EQ(reason, "--compile_server=on");
  CommandResult r = run(harvestCommand(corpus("cxx-corpus"), Work / "auto", "--compiler=clang"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  EXPECT_EQ(harvestSummary(Work / "auto")["compile_server"]["reason"],
            std::string("clang is the LLVM ") + LLVM_VERSION_STRING + " the compile server is built with");
}

TEST_F(CompileServer, AutoUsesTheServerForOurLlvmAndSaysWhy) {
  std::string out = Work / "auto";
  CommandResult r = run(harvestCommand(corpus(), out, "--modules_filter=m[01]"));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto summary = harvestSummary(out);
  EXPECT_EQ(summary["compile_server"]["used"], true) << summary.dump();
  EXPECT_NE(summary["compile_server"]["reason"].get<std::string>().find("are the LLVM 22"), std::string::npos);
  EXPECT_GT(summary["compile_server"]["peak_rss_kb"].get<long>(), 1000);
  EXPECT_NE(r.Err.find("compile server: on"), std::string::npos) << r.Err;
}

TEST_F(CompileServer, AutoFallsBackToExecForAnotherOptAndOnRefuses) {
  // Another opt: a wrapper around the real one is not the LLVM we link.
  std::string wrapper = writeScript(Work / "bin/opt", "#!/bin/sh\nexec opt-22 \"$@\"\n");
  std::string out = Work / "other";
  CommandResult r = run(harvestCommand(corpus(), out, "--modules_filter=m0 --opt_path=" + quote(wrapper)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  auto summary = harvestSummary(out);
  EXPECT_EQ(summary["compile_server"]["used"], false);
  std::string reason = summary["compile_server"]["reason"];
  EXPECT_NE(reason.find("--opt_path=" + wrapper), std::string::npos) << reason;
  EXPECT_NE(reason.find("not the LLVM 22"), std::string::npos) << reason;
  EXPECT_NE(r.Err.find("compile server: off"), std::string::npos) << r.Err;
  EXPECT_EQ(journalByModule(out)["m0"]["status"], "ok");

  r = run(harvestCommand(corpus(), Work / "refused", "--opt_path=" + quote(wrapper) + " --compile_server=on"));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("--compile_server=on: --opt_path="), std::string::npos) << r.Err;

  // A server that cannot load its tool library says why, in the error.
  fs::create_directories(Work / "lonely");
  fs::copy_file(server(), Work / "lonely/mlgo-compile-server");
  r = run(harvestCommand(corpus(), Work / "lonely-out",
                         "--compile_server=on --compile_server_path=" + quote(Work / "lonely/mlgo-compile-server")));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("cannot load " + (Work / "lonely/libMLGOOptLlc.so")), std::string::npos) << r.Err;

  // Another clang likewise.
  std::string clangWrapper = writeScript(Work / "bin/clang", "#!/bin/sh\nexec clang-22 \"$@\"\n");
  r = run(harvestCommand(corpus("cxx-corpus"), Work / "clang",
                         "--compiler=clang --compile_server=on --clang_path=" + quote(clangWrapper)));
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_NE(r.Err.find("--compile_server=on: --clang_path="), std::string::npos) << r.Err;
}

TEST_F(CompileServer, AnAbortingOrHangingChildCostsOnlyItsModule) {
  std::string own = ownServer(Work / "server");
  for (const char *kind : {"abort", "hang"}) {
    std::string out = Work / kind;
    std::string env = std::string("MLGO_COMPILE_SERVER_FAULT=") + kind + ":/m3.bc ";
    auto start = Clock::now();
    CommandResult r =
        run(env + harvestCommand(corpus(), out,
                                 "--compile_server=on --compilation_timeout=3 --compile_server_path=" + quote(own)));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 60);
    auto journal = journalByModule(out);
    ASSERT_EQ(journal.size(), 8u);
    for (const auto &[module, record] : journal) {
      if (module != "m3") {
        EXPECT_EQ(record["status"], "ok") << record.dump();
        continue;
      }
      if (std::string(kind) == "abort") {
        EXPECT_EQ(record["status"], "failed") << record.dump();
        EXPECT_EQ(record["reason"], "compiler_failed") << record.dump();
        EXPECT_EQ(record["exit_status"], "signal 6 (Aborted)") << record.dump();
      } else {
        EXPECT_EQ(record["status"], "timeout") << record.dump();
      }
    }
    EXPECT_EQ(runningServers(own).size(), 0u) << kind << ": a server outlived the harvest";
  }
}

// The regalloc plugin is loaded once, by the server, before it forks: the
// llc children find it loaded (their -load opens nothing), so none pays to
// map, relocate and initialise it again.
TEST_F(CompileServer, TheRegallocPluginIsLoadedByTheServerNotPerChild) {
  std::string why;
  ASSERT_TRUE(straceWorks(why)) << why;
  std::string plugin = std::string(MLGO_BIN_DIR) + "/../lib/mlgo-corpus/libMLGORegAllocAdvisor.so";
  TraceResult t = runTraced(harvestCommand(corpus("regalloc-corpus"), Work / "traced",
                                           "--compiler=llc --problem=regalloc-evict --policy=default --mode=plugin "
                                           "--compile_server=on --num_workers=1"),
                            {"prctl", "openat", "open"});
  ASSERT_EQ(t.Run.ExitCode, 0) << t.Run.Err;
  std::set<pid_t> children;
  for (const TracedCall &c : t.Calls)
    if (c.Name == "prctl" && c.Args.size() >= 2 && c.Args[0] == "PR_SET_NAME" && c.Args[1] == "\"llc-22\"")
      children.insert(c.Pid);
  EXPECT_EQ(children.size(), 2u) << t.Raw;
  std::string name = fs::path(plugin).filename();
  size_t byServer = 0, byChildren = 0;
  for (const TracedCall &c : t.Calls)
    if ((c.Name == "openat" || c.Name == "open") && c.Result >= 0 &&
        std::any_of(c.Args.begin(), c.Args.end(),
                    [&](const std::string &a) { return a.find(name) != std::string::npos; }))
      ++(children.count(c.Pid) ? byChildren : byServer);
  EXPECT_EQ(byChildren, 0u) << t.Raw;
  EXPECT_GE(byServer, 1u) << t.Raw;
  for (const auto &[module, record] : journalByModule(Work / "traced"))
    EXPECT_GT(record["decisions"].get<int>(), 10) << record.dump();
}

// A child that crashes while compiling with the regalloc plugin (llc's or
// clang cc1's) costs its module only; the other module's log and record are
// the exec path's.
TEST_F(CompileServer, ACrashingRegallocPluginChildCostsOnlyItsModule) {
  std::string own = ownServer(Work / "server");
  struct Case {
    std::string Corpus, Compiler, Crashing, Other;
  };
  for (const Case &c : {Case{corpus("regalloc-corpus"), "llc", "r1", "r0"},
                        Case{corpus("regalloc-clang-corpus"), "clang", "rp1.o", "rp0.o"}}) {
    const std::string flags = "--compiler=" + c.Compiler + " --problem=regalloc-evict --policy=default --mode=plugin";
    std::string out = Work / (c.Compiler + "-crash"), clean = Work / (c.Compiler + "-clean");
    CommandResult r =
        run("MLGO_COMPILE_SERVER_FAULT=abort:/" + c.Crashing + ".bc " +
            harvestCommand(c.Corpus, out, flags + " --compile_server=on --compile_server_path=" + quote(own)));
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
    mustRun(harvestCommand(c.Corpus, clean, flags + " --compile_server=off"));
    auto crashed = journalByModule(out), expected = journalByModule(clean);
    ASSERT_EQ(crashed.size(), 2u) << c.Compiler;
    nlohmann::json &failed = crashed[c.Crashing], &ok = crashed[c.Other];
    EXPECT_EQ(failed["status"], "failed") << failed.dump();
    EXPECT_EQ(failed["reason"], "compiler_failed") << failed.dump();
    EXPECT_EQ(failed["exit_status"], "signal 6 (Aborted)") << failed.dump();
    EXPECT_FALSE(fs::exists(out + "/logs/" + c.Crashing + ".log"));
    ok.erase("seconds");
    expected[c.Other].erase("seconds");
    EXPECT_EQ(ok, expected[c.Other]) << c.Compiler;
    EXPECT_EQ(ok["status"], "ok") << ok.dump();
    EXPECT_TRUE(readFile(out + "/logs/" + c.Other + ".log") == readFile(clean + "/logs/" + c.Other + ".log"))
        << c.Compiler;
    EXPECT_EQ(harvestSummary(out)["compile_server"]["used"], true);
    EXPECT_EQ(runningServers(own).size(), 0u);
  }
}

// opt's child goes on to generate code (one child per module, not two): a
// crash there is the module's codegen_failed, as when llc runs on its own;
// the rest of the run is the exec path's.
TEST_F(CompileServer, ACrashInCodegenAfterOptInTheSameChildIsCodegenFailed) {
  std::string own = ownServer(Work / "server");
  std::string out = Work / "crash", clean = Work / "clean";
  CommandResult r = run("MLGO_COMPILE_SERVER_FAULT=abort-codegen:/m3.bc " +
                        harvestCommand(corpus(), out, "--compile_server=on --compile_server_path=" + quote(own)));
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  mustRun(harvestCommand(corpus(), clean, "--compile_server=off"));
  auto crashed = journalByModule(out), expected = journalByModule(clean);
  ASSERT_EQ(crashed.size(), 8u);
  for (auto &[module, record] : crashed) {
    if (module == "m3") {
      EXPECT_EQ(record["status"], "failed") << record.dump();
      EXPECT_EQ(record["reason"], "codegen_failed") << record.dump();
      EXPECT_EQ(record["exit_status"], "signal 6 (Aborted)") << record.dump();
      EXPECT_FALSE(fs::exists(out + "/logs/m3.log"));
      continue;
    }
    record.erase("seconds");
    expected[module].erase("seconds");
    EXPECT_EQ(record, expected[module]);
  }
  // No llc child: the code generation of every module ran in opt's.
  TraceResult t =
      runTraced(harvestCommand(corpus(), Work / "traced", "--compile_server=on --num_workers=1"), {"prctl"});
  ASSERT_EQ(t.Run.ExitCode, 0) << t.Run.Err;
  size_t optChildren = childrenNamed(t, "opt-22"), llcChildren = childrenNamed(t, "llc-22");
  EXPECT_EQ(optChildren, 8u) << t.Raw;
  EXPECT_EQ(llcChildren, 0u) << t.Raw;
}

// A large module's code is generated in an llc child of its own (faster
// than on the heap opt leaves behind), a small one's in opt's child: both
// as the exec path's.
TEST_F(CompileServer, OnlyALargeModuleGetsAnLlcChildOfItsOwn) {
  ASSERT_GT(fs::file_size(corpus("big-corpus") + "/big.o.bc"), 64u << 10);
  ASSERT_LT(fs::file_size(corpus("big-corpus") + "/small.o.bc"), 64u << 10);
  expectServerEqualsExec(corpus("big-corpus"), "--mode=plugin", "big");
  TraceResult t = runTraced(harvestCommand(corpus("big-corpus"), Work / "traced", "--compile_server=on"), {"prctl"});
  ASSERT_EQ(t.Run.ExitCode, 0) << t.Run.Err;
  size_t optChildren = childrenNamed(t, "opt-22"), llcChildren = childrenNamed(t, "llc-22");
  EXPECT_EQ(optChildren, 2u) << t.Raw;
  EXPECT_EQ(llcChildren, 1u) << t.Raw;
}

TEST_F(CompileServer, AServerKilledMidRunCostsAtMostItsRequestAndResumeEqualsACleanRun) {
  std::string out = Work / "killed", clean = Work / "clean";
  std::string own = ownServer(Work / "server");
  BackgroundCommand harvest(
      harvestCommand(corpus(), out, "--compile_server=on --num_workers=2 --compile_server_path=" + quote(own)));
  std::vector<pid_t> killed;
  // Once a module is journaled (so not the probe's server: that one's death
  // would make --compile_server=on refuse the run), mid-run.
  ASSERT_TRUE(waitUntil([&] { return readFile(out + "/harvest.jsonl").find("\"module\"") != std::string::npos; },
                        GenerousDeadline, "the first journaled module"));
  ASSERT_TRUE(waitUntil(
      [&] {
        for (pid_t pid : runningServers(own))
          if (::kill(pid, SIGKILL) == 0)
            killed.push_back(pid);
        return !killed.empty();
      },
      GenerousDeadline, "a compile server to kill", std::chrono::milliseconds(1)));
  int status = 0;
  ASSERT_TRUE(harvest.wait(GenerousDeadline, status));
  EXPECT_EQ(shellExitCode(status), 0);
  auto summary = harvestSummary(out);
  EXPECT_GE(summary["compile_server"]["starts"].get<int>(), 2) << summary.dump();
  auto journal = journalByModule(out);
  EXPECT_EQ(journal.size(), 8u);
  for (const auto &[module, record] : journal)
    if (record["status"] != "ok")
      EXPECT_EQ(record["reason"], "compile_server_failed") << record.dump();
  // A second run redoes what failed; the result is a clean run's.
  mustRun(harvestCommand(corpus(), out, "--compile_server=on"));
  mustRun(harvestCommand(corpus(), clean, "--compile_server=off"));
  expectSameLogs(out, clean);
  EXPECT_EQ(journalWithoutTimings(out), journalWithoutTimings(clean));
  EXPECT_EQ(runningServers(own).size(), 0u);
}

// One opt-22 compile of `bitcode` by a server started from `serverPath`:
// the child's minor page faults, and whether the server's libLLVM code was
// still mapped from its file while it ran.
struct ChildCost {
  long MinorFaults = 0;
  bool LibLLVMCodeFileBacked = false;
};
ChildCost compileOnce(const std::string &serverPath, const std::string &bitcode, const std::string &output) {
  ChildCost cost;
  mlgo::CompileServerClient client({serverPath, {}, "", "/dev/null"});
  mlgo::SpawnOptions options;
  options.Argv = {"/usr/lib/llvm-22/bin/opt", "-passes=default<Oz>", bitcode, "-o", output};
  // The first compile also starts the server, which makes its code private
  // before the ninth (--private_code_after's default): the tenth is measured.
  for (int round = 0; round < 10; ++round) {
    rusage before{}, after{};
    ::getrusage(RUSAGE_CHILDREN, &before);
    auto child = client.spawn("opt", options);
    if (!child) {
      ADD_FAILURE() << llvm::toString(child.takeError());
      return cost;
    }
    EXPECT_TRUE(child->wait().ok());
    ::getrusage(RUSAGE_CHILDREN, &after);
    cost.MinorFaults = after.ru_minflt - before.ru_minflt;
  }
  std::vector<pid_t> servers = runningServers(serverPath);
  EXPECT_EQ(servers.size(), 1u);
  for (pid_t pid : servers) {
    std::istringstream maps(readFile("/proc/" + std::to_string(pid) + "/maps"));
    for (std::string line; std::getline(maps, line);)
      if (line.find(" r-xp ") != std::string::npos && line.find("/libLLVM") != std::string::npos)
        cost.LibLLVMCodeFileBacked = true;
  }
  return cost;
}

// A compile child takes its tool's name before anything else: while it is
// still setting up (here: blocked opening a FIFO as its stdout), it is not
// seen under the server's name, so that nothing looking for the server by
// name (these tests, ps) can take the child for it.
TEST_F(CompileServer, AChildIsNamedAsItsToolBeforeItsSetUp) {
  std::string own = ownServer(Work / "server");
  std::string fifo = Work / "stdout.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  writeFile(Work / "m.ll", "define i32 @f(i32 %x) {\n  ret i32 %x\n}\n");
  mustRun("/usr/lib/llvm-22/bin/llvm-as " + quote(Work / "m.ll") + " -o " + quote(Work / "m.bc"));
  mlgo::CompileServerClient client({own, {}, "", "/dev/null"});
  mlgo::SpawnOptions options;
  options.Argv = {"/usr/lib/llvm-22/bin/opt", "-passes=default<Oz>", Work / "m.bc", "-o", Work / "out.bc"};
  options.StdoutPath = fifo; // the child blocks opening it until we read
  std::optional<llvm::Expected<mlgo::ChildProcess>> spawned;
  std::thread spawner([&] { spawned.emplace(client.spawn("opt", options)); });
  // Our children: the server and, once cloned, the compile child.
  auto children = [] {
    std::vector<std::string> names;
    for (const auto &entry : fs::directory_iterator("/proc")) {
      std::string stat = readFile(entry.path().string() + "/stat");
      size_t close = stat.rfind(')');
      if (close == std::string::npos)
        continue;
      std::istringstream rest(stat.substr(close + 2));
      std::string state;
      pid_t ppid = 0;
      rest >> state >> ppid;
      if (ppid == ::getpid())
        names.push_back(readFile(entry.path().string() + "/comm"));
    }
    return names;
  };
  // The child is blocked in its set-up (the stdout FIFO) until we read, so
  // the name it shows meanwhile is the one it took before its set-up. (Just
  // after the clone it still has the server's name for a moment: seen once
  // in CI, so the check waits for the blocked child rather than the first.)
  std::vector<std::string> seen;
  const std::vector<std::string> expected{"mlgo-compile-se\n", "opt\n"};
  EXPECT_TRUE(waitUntil(
      [&] {
        seen = children();
        std::sort(seen.begin(), seen.end());
        return seen == expected;
      },
      GenerousDeadline, "the compile child to be cloned and named"));
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(runningServers(own).size(), 1u);
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK); // lets the child go on
  spawner.join();
  ASSERT_TRUE(spawned && *spawned) << (spawned ? llvm::toString(spawned->takeError()) : "no reply");
  EXPECT_TRUE((**spawned).wait().ok());
  ::close(reader);
}

// fork() copies the page tables of anonymous memory only: the server moves
// libLLVM's code into private memory so that a child runs it without a
// page fault per page (MLGO_COMPILE_SERVER_SHARED_CODE=1 keeps it shared).
// Both ways the child writes the same bitcode.
TEST_F(CompileServer, ChildrenInheritTheServersCodeMapped) {
  std::string own = ownServer(Work / "server");
  writeFile(Work / "m.ll", "define i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n");
  mustRun("/usr/lib/llvm-22/bin/llvm-as " + quote(Work / "m.ll") + " -o " + quote(Work / "m.bc"));
  ChildCost privateCode = compileOnce(own, Work / "m.bc", Work / "private.bc");
  ::setenv("MLGO_COMPILE_SERVER_SHARED_CODE", "1", 1);
  ChildCost sharedCode = compileOnce(own, Work / "m.bc", Work / "shared.bc");
  ::unsetenv("MLGO_COMPILE_SERVER_SHARED_CODE");
  EXPECT_FALSE(privateCode.LibLLVMCodeFileBacked);
  EXPECT_TRUE(sharedCode.LibLLVMCodeFileBacked);
  // Measured: about 230 faults against 640 (two thirds were libLLVM's code).
  EXPECT_LT(privateCode.MinorFaults * 2, sharedCode.MinorFaults)
      << privateCode.MinorFaults << " vs " << sharedCode.MinorFaults;
  mustRun("/usr/lib/llvm-22/bin/opt -passes='default<Oz>' " + quote(Work / "m.bc") + " -o " + quote(Work / "exec.bc"));
  EXPECT_EQ(readFile(Work / "private.bc"), readFile(Work / "exec.bc"));
  EXPECT_EQ(readFile(Work / "shared.bc"), readFile(Work / "exec.bc"));
  EXPECT_EQ(runningServers(own).size(), 0u);
}

TEST_F(CompileServer, TheServerRefusesARunByHandAndExplainsItself) {
  CommandResult help = run(quote(server()) + " --help");
  EXPECT_EQ(help.ExitCode, 0);
  EXPECT_NE(help.Out.find("--preload=LIBRARY"), std::string::npos) << help.Out;
  CommandResult bad = run(quote(server()) + " --frobnicate </dev/null");
  EXPECT_EQ(bad.ExitCode, 2);
  EXPECT_NE(bad.Err.find("unknown argument --frobnicate"), std::string::npos) << bad.Err;
  // A request stream that is not the protocol ends the server, not in a crash.
  CommandResult garbage = run("printf 'xxxxxxxxxxxxxxxxxxxx' | " + quote(server()) + " >/dev/null");
  EXPECT_EQ(garbage.ExitCode, 0) << garbage.Err;
}

} // namespace
