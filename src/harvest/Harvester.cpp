#include "mlgo/harvest/Harvester.h"

#include "mlgo/compile/CompileConfinement.h"
#include "mlgo/corpus/LinkOrder.h"
#include "mlgo/evaluate/BaselineCache.h"
#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/HarvestReadRules.h"
#include "mlgo/support/Version.h"

#include "mlgo/compile/InteractiveSession.h"
#include "mlgo/compile/ModeSelection.h"
#include "mlgo/compile/PluginMode.h"
#include "mlgo/compile/WorkDirectory.h"
#include "mlgo/evaluate/NativeSize.h"
#include "mlgo/evaluate/RegallocReward.h"
#include "mlgo/harvest/HarvestTrajectories.h"
#include "mlgo/log/DatasetFile.h"
#include "mlgo/log/LogDataset.h"
#include "mlgo/server/CompileServerProtocol.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/DirectoryLock.h"
#include "mlgo/support/FileDescriptorIo.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/MoveFile.h"
#include "mlgo/support/OutputFile.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/Progress.h"
#include "mlgo/support/SerialQueue.h"
#include "mlgo/support/StaleTemporaries.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace mlgo {
namespace {

// A hard link at `to` of the file open as `fd`: through /proc/self/fd, or,
// where no /proc is mounted, AT_EMPTY_PATH (which needs CAP_DAC_READ_SEARCH).
bool linkDescriptor(int fd, const std::string &to) {
  std::string viaProc = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, viaProc.c_str(), AT_FDCWD, to.c_str(), AT_SYMLINK_FOLLOW) == 0)
    return true;
  int error = errno;
  if (error != ENOENT || ::access("/proc/self/fd", F_OK) == 0) {
    errno = error; // the link's own failure, whatever access() set
    return false;
  }
  return ::linkat(fd, "", AT_FDCWD, to.c_str(), AT_EMPTY_PATH) == 0; // else the fallback's own errno
}

using Clock = std::chrono::steady_clock;

// The journal record a module's harvest produces (mlgo/harvest/HarvestJournal.h).
using ModuleRecord = HarvestRecord;

// Where a harvested module's files go once they are durable (Harvest::place).
struct LogPlacement {
  std::string Log, LogDestination;     // empty: no log
  std::string Sites, SitesDestination; // empty: no sites file
};

struct HarvestedModule {
  ModuleRecord Record;
  LogPlacement Placement;
  std::string Work; // below OUT, removed once placed; empty: kept (--explicit_temps_dir)
};

// Finished modules waiting for their syncs, per worker: enough to cover a
// slow sync, few enough to bound the work directories left on disk.
constexpr size_t PendingPlacementsPerWorker = 2;

// A module's fork chain in OUT/explore/chains: one flat directory named by
// a hash of the module name, so that nested module names (`a` and `a/t1`)
// never share or reach into another module's chain.
std::string exploreChainName(const std::string &module) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(module));
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest).take_front(16), /*LowerCase=*/true);
}

std::string logPath(const HarvestOptions &o, const std::string &module) { return harvestLogPath(o.OutputDir, module); }

// How many newline-terminated lines a file of ours has.
llvm::Expected<size_t> countLines(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: %s", path.c_str(), buffer.getError().message().c_str());
  return static_cast<size_t>(std::count((*buffer)->getBufferStart(), (*buffer)->getBufferEnd(), '\n'));
}

// A module's log and the sites file that describes it come and go together.
// Module names nest (sub/m0): neither removal follows a link planted in
// OUT/logs, which would make us delete files we do not own.
llvm::Error removeLog(const HarvestOptions &o, const std::string &module) {
  if (llvm::Error e = removeBeneath(o.OutputDir, harvestSitesName(module)))
    return e;
  return removeBeneath(o.OutputDir, harvestLogName(module));
}

// A work directory that cannot be made: a planted link is named as one; any
// other failure is a WriteError, which stops the run on an unusable file system.
llvm::Error workDirectoryError(const std::string &work, llvm::Error error) {
  return llvm::handleErrors(std::move(error), [&](const BeneathError &e) -> llvm::Error {
    if (e.symbolicLink())
      return llvm::createStringError(e.convertToErrorCode(), "%s", e.message().c_str());
    return llvm::make_error<WriteError>(work, e.convertToErrorCode());
  });
}

class Harvest {
public:
  Harvest(const HarvestOptions &options, const CorpusDescription &corpus)
      : Options(options), Corpus(corpus), ReadExec(harvestReadExecRules(options)) {}

  llvm::Error prepare() {
    if (std::error_code ec = llvm::sys::fs::create_directories(Options.OutputDir))
      return llvm::createStringError(ec, "cannot create %s: %s", Options.OutputDir.c_str(), ec.message().c_str());
    // Below OUT nothing is followed: a directory planted as a link is named.
    for (const char *dir : {"logs", ".mlgo-harvest", ".mlgo-harvest/work"})
      if (llvm::Error e = makeDirectoriesBeneath(Options.OutputDir, dir))
        return llvm::createStringError("cannot create %s: %s", joinPath(Options.OutputDir, dir).c_str(),
                                       llvm::toString(std::move(e)).c_str());
    if (Options.Link.stagesObjects())
      if (llvm::Error e = makeDirectoriesBeneath(Options.OutputDir, ".mlgo-harvest/objects"))
        return llvm::createStringError("cannot create %s: %s",
                                       joinPath(Options.OutputDir, ".mlgo-harvest/objects").c_str(),
                                       llvm::toString(std::move(e)).c_str());
    if (sizeRewarded()) {
      // A cache written with other options (compiler, passes) is started afresh.
      // A damaged cache too: it only saves recompiles (merge-harvest reads it alike).
      auto cache = readDefaultSizeCache(defaultSizesPath());
      bool reuse = false;
      if (cache) {
        JournalContents header;
        header.Options = cache->Options;
        if (!cache->Sizes.empty())
          header.Records.emplace_back(); // entries without a header are not reused
        reuse = !errorToBool(checkJournalOptions(header, harvestJournalOptions(Options), defaultSizesPath(), ""));
      } else {
        log::warning("starting the default-size cache afresh: " + llvm::toString(cache.takeError()));
      }
      if (reuse)
        for (const auto &[module, entry] : cache->Sizes)
          DefaultSizes[module] = entry.first;
      // Afresh: whatever is at its name (a link planted there) is removed itself.
      else if (llvm::Error e = removeBeneath(Options.OutputDir, "default_sizes.jsonl"))
        return e;
      if (llvm::Error e = DefaultSizeCache.open(defaultSizesPath(), !reuse, harvestJournalOptions(Options)))
        return e;
      if (llvm::Error e = openBaselineCache())
        return e;
    }
    // --link: the default's linked size is kept there too; a default
    // harvest's sizes are the baselines, stored for the next policy's.
    if ((Options.Link.requested() || fillsBaselines()) && !Baselines)
      if (llvm::Error e = openBaselineCache())
        return e;
    return llvm::Error::success();
  }

  /// The module's baseline cache key (BaselineCache.h); nullopt without a
  /// cache or when its inputs cannot be read.
  std::optional<std::string> baselineKeyOf(const std::string &module) const {
    if (!Baselines)
      return std::nullopt;
    auto in = inputs(module);
    if (!in) {
      llvm::consumeError(in.takeError());
      return std::nullopt;
    }
    auto bitcode = llvm::MemoryBuffer::getFile(in->Bitcode, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!bitcode)
      return std::nullopt;
    return baselineKey({Options.Decisions, Options.Compiler, CompilerIdentity, in->CommandLine},
                       (*bitcode)->getBuffer());
  }
  const std::optional<BaselineCache> &baselineCache() const { return Baselines; }

  /// Compiles a module; its log, if any, still lies in its work directory
  /// (place() puts it in logs/).
  HarvestedModule harvest(const PlannedModule &module, size_t index, Policy &policy, CompileServerClient *server) {
    auto start = Clock::now();
    HarvestedModule done;
    ModuleRecord &record = done.Record;
    record.Module = module.Name;
    // Emptied and made without following a link: one planted as a work
    // directory (or on the way to it) would have us delete what it names.
    bool inOut = Options.ExplicitTempsDir.empty();
    std::string root = inOut ? Options.OutputDir : Options.ExplicitTempsDir;
    std::string name = inOut ? ".mlgo-harvest/work/" + std::to_string(index) : workDirectoryName(module.Name);
    std::string work = joinPath(root, name);
    if (!inOut)
      llvm::sys::fs::create_directories(root); // the user's own directory
    llvm::consumeError(removeTreeBeneath(root, name));
    if (llvm::Error e = makeDirectoriesBeneath(root, name)) {
      writeFailed(record, workDirectoryError(work, std::move(e)));
      return done;
    }
    run(module, work, policy, server, record, done.Placement);
    record.Seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (inOut)
      done.Work = name;
    if (done.Placement.Log.empty())
      removeWork(done);
    return done;
  }

  /// Makes a harvested module's log (and sites file) durable in logs/, as
  /// its journal record will promise: each file synced, then renamed (a
  /// copy when the work directory is on another file system:
  /// --explicit_temps_dir), then logs/ synced (docs/harvest-logs.md). The
  /// sites file goes first: a log in place promises its sites. Runs on the
  /// harvest's committing thread, while the workers compile on.
  void place(HarvestedModule &done) {
    const LogPlacement &p = done.Placement;
    if (!p.Log.empty()) {
      // Renamed into logs/'s subdirectory as opened without following a link.
      auto logs = openParentBeneath(Options.OutputDir, harvestLogName(done.Record.Module), /*create=*/true);
      llvm::Error placed = logs ? llvm::Error::success() : logs.takeError();
      if (!placed && !p.Sites.empty()) {
        placed = syncFile(p.Sites);
        if (!placed)
          placed = moveFileInto(p.Sites, logs->Dir.get(), baseName(p.SitesDestination), p.SitesDestination);
      }
      if (!placed)
        placed = syncFile(p.Log);
      if (!placed)
        placed = moveFileInto(p.Log, logs->Dir.get(), logs->Name, p.LogDestination);
      if (!placed)
        placed = syncDirectoryDescriptor(logs->Dir.get(), dirName(p.LogDestination));
      if (placed)
        writeFailed(done.Record, std::move(placed));
      else
        done.Record.LogWritten = true;
    }
    removeWork(done);
  }

  /// Set once a write failed because the output file system is unusable
  /// (full, read-only, failing): the remaining modules would all fail.
  std::optional<std::string> stopReason() const {
    std::lock_guard<std::mutex> lock(StopMutex);
    return StopReason;
  }
  bool stopped() const { return Stopped.load(std::memory_order_relaxed); }
  /// Stops the run (e.g. the journal cannot be appended to).
  void stop(std::string reason) {
    std::lock_guard<std::mutex> lock(StopMutex);
    if (!StopReason)
      StopReason = std::move(reason);
    Stopped = true;
  }

private:
  llvm::Error openBaselineCache() {
    if (Options.BaselineCacheDir.empty())
      return llvm::Error::success();
    // A cache below OUT (--explore's, a batch's) is made there through no
    // link; one the user names elsewhere is theirs.
    if (isWithin(Options.BaselineCacheDir, Options.OutputDir) &&
        normalizePath(Options.BaselineCacheDir) != normalizePath(Options.OutputDir)) {
      std::string relative =
          normalizePath(Options.BaselineCacheDir).substr(normalizePath(Options.OutputDir).size() + 1);
      if (llvm::Error e = makeDirectoriesBeneath(Options.OutputDir, relative))
        return e;
    }
    auto cache = BaselineCache::open(Options.BaselineCacheDir);
    if (!cache)
      return cache.takeError();
    Baselines.emplace(std::move(*cache));
    CompilerIdentity = compilerIdentity(Options.Compiler);
    return llvm::Error::success();
  }

  void removeWork(HarvestedModule &done) {
    if (!done.Work.empty())
      llvm::consumeError(removeTreeBeneath(Options.OutputDir, done.Work));
    done.Work.clear();
  }

  void writeFailed(ModuleRecord &record, llvm::Error error) {
    record.Status = "failed";
    record.Reason = "write_failed";
    llvm::handleAllErrors(
        std::move(error),
        [&](const WriteError &failure) {
          record.Detail = failure.message();
          if (failure.fileSystemUnusable()) {
            std::lock_guard<std::mutex> lock(StopMutex);
            if (!StopReason)
              StopReason = "the output file system is unusable (" + failure.message() + ")";
            Stopped = true;
          }
        },
        [&](const llvm::ErrorInfoBase &other) { record.Detail = other.message(); });
  }

  std::string defaultSizesPath() const { return joinPath(Options.OutputDir, "default_sizes.jsonl"); }

  // Inliner policies other than the default are rewarded against the
  // ordinary inliner's native size, as ml-compiler-opt does.
  bool sizeRewarded() const {
    return Options.Decisions == Problem::Inliner &&
           (Options.Policy.How == PolicySpec::Kind::Random || Options.Policy.How == PolicySpec::Kind::Exec ||
            Options.Policy.How == PolicySpec::Kind::TFLite || Options.Policy.How == PolicySpec::Kind::InProcess ||
            Options.Policy.How == PolicySpec::Kind::Replay);
  }

  Deadline deadline() const {
    return Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(Options.TimeoutSeconds * 1000));
  }

  void setOutcome(ModuleRecord &record, const CompileOutcome &outcome) {
    record.Status = outcome.Result == CompileOutcome::Status::Timeout ? "timeout" : statusName(outcome.Result);
    record.Reason = outcome.Reason;
    record.Detail = outcome.Detail;
    record.ExitStatus = outcome.Exit ? outcome.Exit->describe() : "";
    record.StderrTail = outcome.StderrTail;
  }

  llvm::Expected<ModuleInputs> inputs(const std::string &module) const {
    ModuleInputs in;
    in.Bitcode = joinPath(Options.CorpusDir, module + ".bc");
    if (Options.Compiler.Kind != CompilerKind::Clang)
      return in;
    if (auto override = Corpus.Fields.find("global_command_override"); override != Corpus.Fields.end()) {
      bool strings = override->is_array();
      for (const auto &arg : *override)
        strings = strings && arg.is_string();
      if (!strings || *override == nlohmann::ordered_json::array({"<UNSPECIFIED>"}))
        return llvm::createStringError("the corpus' global_command_override is %s: it must be the command line "
                                       "every module is compiled with",
                                       override->dump().c_str());
      auto line = screened(override->get<std::vector<std::string>>(), "global_command_override", in.Bitcode);
      if (!line)
        return line.takeError();
      in.CommandLine = std::move(*line);
      return in;
    }
    std::string cmdPath = joinPath(Options.CorpusDir, module + ".cmd");
    auto args = readModuleCommandLine(cmdPath);
    if (!args)
      return args.takeError();
    auto line = screened(*args, cmdPath, in.Bitcode);
    if (!line)
      return line.takeError();
    in.CommandLine = std::move(*line);
    return in;
  }

  // A corpus' command line is clang's argv: refused when it loads code,
  // writes or copies files or is off the -mllvm allow-list, and a driver
  // line runs as the one cc1 job it makes, unless the user trusts the corpus
  // (docs/security.md).
  llvm::Expected<std::vector<std::string>> screened(std::vector<std::string> args, const std::string &source,
                                                    const std::string &bitcode) const {
    if (Options.TrustCorpusCommands)
      return args;
    return screenedCompileLine(args, source, Options.Compiler.Clang, bitcode);
  }

  CompileJob job(std::vector<std::string> argv, const std::string &work, const char *stderrName,
                 CompileServerClient *server, const ModuleInputs &in) const {
    CompileJob job{std::move(argv),
                   joinPath(work, stderrName),
                   deadline(),
                   Options.TimeoutSeconds,
                   work,
                   Options.CompilerWritableDirs,
                   withModuleInputs(ReadExec, in.Bitcode, Options.CorpusDir)};
    // The server runs the very tools the exec path would (CompileServerChoice.h).
    if (server && Options.UseCompileServer) {
      job.Server = server;
      job.Tool = job.Argv[0] == Options.Compiler.Opt     ? "opt"
                 : job.Argv[0] == Options.Compiler.Llc   ? "llc"
                 : job.Argv[0] == Options.Compiler.Clang ? "clang"
                                                         : "";
    }
    return job;
  }

  // A second child's start-up weighs on small modules; on large ones llc is
  // faster in a fresh child than on the heap opt leaves behind (measured on
  // bench/harvest.sh's corpora: 4.5% less CPU on its C modules of 10-30 KiB
  // of bitcode, 2% more on its C++ modules of 120-250 KiB).
  static bool smallEnoughForOneChild(const std::string &bitcode) {
    constexpr uint64_t MaxBitcodeBytes = 64 << 10;
    uint64_t size = 0;
    return !llvm::sys::fs::file_size(bitcode, size) && size <= MaxBitcodeBytes;
  }

  // Compiles with `advisor`; leaves the object in commands.Native.
  void compile(const ModuleInputs &in, const AdvisorSetup &advisor, const std::string &work, Policy *policy,
               CompileServerClient *server, llvm::raw_ostream *log, ModuleRecord &record, ModuleCommands &commands) {
    commands = moduleCommands(Options.Compiler, Options.Decisions, in, advisor, work);
    CompileJob compileJob = job(commands.Compile, work, "compile.stderr", server, in);
    // Through the server, opt's child of a small module goes on to llc's
    // work on the module it holds (docs/compile-server.md). Not with extra
    // compiler flags: they are opt's, and llc, parsing its command line over
    // opt's, would keep them.
    bool oneChild = commands.Codegen && compileJob.Server && compileJob.Tool == "opt" &&
                    Options.Decisions == Problem::Inliner && Options.Compiler.ExtraFlags.empty();
    bool codegenToo = oneChild && smallEnoughForOneChild(in.Bitcode);
    // --explore: the base compile forks the module's explored trajectories
    // (ExplorationChain.h), which needs llc in the same child.
    bool forking = oneChild && advisor.Enabled && advisor.Mode == AdvisorMode::Plugin && !chainDirectory(work).empty();
    if (forking) {
      codegenToo = true;
      // Every checkpoint shares opt's output file: its bitcode goes to
      // /dev/null (stdout), as llc reads the module in memory.
      for (size_t i = 0; i + 1 < compileJob.Argv.size(); ++i)
        if (compileJob.Argv[i] == "-o")
          compileJob.Argv[i + 1] = "-";
      char timeout[32];
      std::snprintf(timeout, sizeof(timeout), "%.17g", Options.TimeoutSeconds);
      compileJob.Argv.push_back("-mlgo-inliner-explore=" + std::to_string(Options.Chains.Trajectories) + ":" +
                                Options.Chains.Order + ":" + timeout + ":" + chainDirectory(work));
      // Each trajectory's own compile has the timeout (its parent enforces it).
      compileJob.Until = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(
                                            Options.TimeoutSeconds * 1000 * (Options.Chains.Trajectories + 1)));
    }
    if (codegenToo)
      compileJob.Codegen = *commands.Codegen;
    CompileOutcome outcome = advisor.Enabled && advisor.Mode == AdvisorMode::Interactive
                                 ? runInteractive(compileJob, advisor.ChannelBase, Options.Decisions, *policy, *log)
                                 : runCompile(compileJob);
    // A forking base compile runs past its own timeout (its chain follows);
    // one whose own compile took longer ends as the timeout would end it.
    if (forking && outcome.Result == CompileOutcome::Status::Failed &&
        llvm::sys::fs::exists(joinPath(chainDirectory(work), "base-overran"))) {
      outcome.Result = CompileOutcome::Status::Timeout;
      outcome.Reason = "timeout";
      outcome.Detail =
          "killed after " + std::to_string(static_cast<int>(Options.TimeoutSeconds)) + " s (--compilation_timeout)";
    }
    if (advisor.Enabled && advisor.Mode == AdvisorMode::Plugin)
      explainPluginFailure(outcome, advisor.PluginPath);
    explainUnreadableInputs(outcome, in.CommandLine, compileJob);
    record.Decisions = outcome.Decisions;
    record.Streams = outcome.Streams;
    setOutcome(record, outcome);
    if (codegenToo) {
      std::string marker = server::codegenStartedMarker(commands.Native);
      if (outcome.Result == CompileOutcome::Status::Failed && record.Reason == "compiler_failed" &&
          llvm::sys::fs::exists(marker))
        record.Reason = "codegen_failed"; // as when llc runs on its own
      llvm::sys::fs::remove(marker);
    }
    if (outcome.Result != CompileOutcome::Status::Ok || !commands.Codegen || codegenToo)
      return;
    CompileOutcome codegen = runCompile(job(*commands.Codegen, work, "codegen.stderr", server, in));
    if (codegen.Result != CompileOutcome::Status::Ok) {
      setOutcome(record, codegen);
      record.Reason = codegen.Reason == "compiler_failed" ? "codegen_failed" : codegen.Reason;
    }
  }

  // Where a base compile's fork chain writes ("" : no chain). Not with
  // --explicit_temps_dir: the chains are moved into OUT afterwards.
  std::string chainDirectory(const std::string &work) const {
    if (!Options.Chains.Trajectories || !Options.ExplicitTempsDir.empty())
      return "";
    return joinPath(work, "chain");
  }
  std::string chainName(const std::string &module) const { return "explore/chains/" + exploreChainName(module); }

  // After the base compile: its chain's trajectories, kept for the rounds
  // (a failed base compile's are of no use).
  void keepChain(const std::string &module, const std::string &work, bool ok) {
    std::string chain = chainDirectory(work);
    llvm::consumeError(removeTreeBeneath(Options.OutputDir, chainName(module)));
    if (chain.empty() || !ok || !llvm::sys::fs::is_directory(chain))
      return;
    if (llvm::Error e = makeDirectoriesBeneath(Options.OutputDir, dirName(chainName(module))))
      return llvm::consumeError(std::move(e)); // the rounds compile them
    if (std::error_code ec = llvm::sys::fs::rename(chain, joinPath(Options.OutputDir, chainName(module))))
      log::warning(module + ": cannot keep its explored trajectories (" + ec.message() + "): the rounds compile them");
  }

  // A round of --explore: the module's trajectory `Round`, forked by its
  // base compile, in place of a compile, when it is the one the round
  // would compile: it ended ok, followed the same policy and its decisions
  // start with the round's prefix (the rest follows from the policy, as in
  // a replay). Its files become the compile's outputs in `work`.
  bool adopt(const std::string &module, const std::string &work, const ModuleInputs &in, const AdvisorSetup &advisor,
             ModuleRecord &record, ModuleCommands &commands) {
    if (!Options.Adopt.Round)
      return false;
    auto prefix = Options.Adopt.Prefix.find(module);
    if (prefix == Options.Adopt.Prefix.end())
      return false;
    // Below the chains' directory, through no link, regular files only:
    // the compile that wrote them is data from the corpus too.
    std::string relative = exploreChainName(module) + "/t" + std::to_string(Options.Adopt.Round);
    std::string dir = joinPath(Options.Adopt.ChainsDir, relative);
    // A missing file means the chain did not get there; anything else odd is said.
    auto refuse = [&](const std::string &why) {
      log::warning(module + ": explored trajectory " + std::to_string(Options.Adopt.Round) +
                   " of its fork chain is not taken (compiled instead): " + why);
      return false;
    };
    // Each file is opened once and taken only through that descriptor, so
    // nothing put in its place after the check is read.
    struct Taken {
      const char *Name;
      std::string To; // where the compile's output goes; "" for status.json
      FileDescriptor Fd;
    };
    commands = moduleCommands(Options.Compiler, Options.Decisions, in, advisor, work);
    std::vector<Taken> files;
    files.push_back({"status.json", "", {}});
    files.push_back({"training.log", advisor.TrainingLog, {}});
    files.push_back({"native.o", commands.Native, {}});
    files.push_back({"compile.stderr", joinPath(work, "compile.stderr"), {}});
    if (!advisor.SitesFile.empty())
      files.push_back({"sites.jsonl", advisor.SitesFile, {}});
    for (Taken &file : files) {
      auto fd = openRegularFileBeneath(Options.Adopt.ChainsDir, relative + "/" + file.Name);
      if (!fd) {
        llvm::Error error = fd.takeError();
        if (consumeIfMissing(error))
          return false;
        return refuse(llvm::toString(std::move(error)));
      }
      file.Fd = std::move(*fd);
    }
    // Test seam (docs/harvest-logs.md): MLGO_EXPLORE_ADOPT_SWAP=1 puts the
    // next trajectory's file in each opened one's place, before anything is
    // read, as a compile still writing there could; what is taken must stay
    // what was opened. The next one's is taken as the round takes a file
    // (below the chains, through no link), then linked aside and renamed in.
    if (const char *swap = std::getenv("MLGO_EXPLORE_ADOPT_SWAP"); swap && std::strcmp(swap, "1") == 0) {
      std::string next = exploreChainName(module) + "/t" + std::to_string(Options.Adopt.Round + 1);
      size_t swapped = 0;
      for (const Taken &file : files) {
        if (file.To.empty())
          continue;
        auto from = openRegularFileBeneath(Options.Adopt.ChainsDir, next + "/" + file.Name);
        if (!from) {
          llvm::consumeError(from.takeError());
          continue;
        }
        std::string to = joinPath(dir, file.Name), aside = to + ".swap";
        if (linkDescriptor(from->get(), aside) && !llvm::sys::fs::rename(aside, to))
          ++swapped;
        else
          llvm::sys::fs::remove(aside);
      }
      if (swapped)
        log::warning(module + ": test seam: " + std::to_string(swapped) + " files of explored trajectory " +
                     std::to_string(Options.Adopt.Round) + " swapped after their check");
    }
    // The parent trajectory's few words (ExplorationChain.cpp); anything larger is not one.
    constexpr long MaxStatusBytes = 4096;
    std::string status = joinPath(dir, "status.json");
    char text[MaxStatusBytes + 1];
    long size = readUpTo(files[0].Fd.get(), text, sizeof text);
    if (size < 0) {
      int error = errno;
      return refuse("cannot read " + status + ": " + std::strerror(error));
    }
    if (size > MaxStatusBytes)
      return refuse(status + " is not a status of at most 4 KiB");
    auto json = nlohmann::json::parse(text, text + size, nullptr, false);
    if (!json.is_object())
      return refuse(status + " is not a JSON object");
    auto field = [&](const char *name) { return json.contains(name) ? json[name] : nullptr; };
    if (field("status") != "exit" || field("exit") != 0 || field("then") != Options.Adopt.Then)
      return false;
    // Each file is linked into the work directory from the descriptor that
    // was checked (a rename would take whatever the name holds by then, a
    // copy could be asked to write a huge sparse file out).
    auto discard = [&] { // the round compiles it: nothing of the trajectory stays
      for (Taken &file : files)
        if (!file.To.empty())
          llvm::sys::fs::remove(file.To);
      return false;
    };
    for (Taken &file : files) {
      if (file.To.empty())
        continue;
      llvm::sys::fs::remove(file.To);
      if (!linkDescriptor(file.Fd.get(), file.To)) {
        int error = errno;
        discard();
        return refuse("cannot link " + joinPath(dir, file.Name) + " into " + work + ": " + std::strerror(error));
      }
    }
    auto decisions = loggedDecisions(advisor.TrainingLog);
    if (!decisions) {
      discard();
      return refuse(llvm::toString(decisions.takeError()));
    }
    if (decisions->size() < prefix->second.size() ||
        !std::equal(prefix->second.begin(), prefix->second.end(), decisions->begin()))
      return discard();
    // What the harvest checks of a compile's outputs, checked here, so that
    // a trajectory the chain got wrong is compiled, not recorded as failed.
    if (auto object = berkeleyTextSize(commands.Native); !object) {
      discard();
      return refuse(joinPath(dir, "native.o") + " is not an object file whose size can be measured (" +
                    llvm::toString(object.takeError()) + ")");
    }
    if (!advisor.SitesFile.empty()) {
      auto sites = countLines(advisor.SitesFile);
      if (!sites || *sites != decisions->size()) {
        discard();
        return refuse(joinPath(dir, "sites.jsonl") + " does not hold one site per decision" +
                      (sites ? "" : ": " + llvm::toString(sites.takeError())));
      }
    }
    record.Status = "ok";
    record.ExitStatus = "exit 0";
    ++Adopted;
    return true;
  }

  void run(const PlannedModule &module, const std::string &work, Policy &policy, CompileServerClient *server,
           ModuleRecord &record, LogPlacement &placement) {
    auto in = inputs(module.Name);
    if (!in) {
      llvm::Error error = in.takeError();
      record.Reason = error.isA<UnsafeCommandLineError>() ? "unsafe_command_line" : "bad_module";
      record.Detail = llvm::toString(std::move(error));
      return;
    }
    if (llvm::Error e = policy.beginModule(module.Name)) {
      record.Reason = "policy_error";
      record.Detail = llvm::toString(std::move(e));
      return;
    }
    AdvisorSetup advisor;
    advisor.Mode = Options.Mode;
    advisor.ChannelBase = joinPath(work, "channel");
    advisor.TrainingLog = joinPath(work, "training.log");
    if (Options.Policy.How == PolicySpec::Kind::Model)
      advisor.ModelDir = Options.Policy.ModelDir;
    advisor.PluginPath = Options.PluginPath;
    advisor.PluginPolicy = pluginPolicy(Options.Policy);
    advisor.ModuleName = module.Name; // seeds the plugin's random policy as the interactive one
    if (decisionSitesWritten(Options))
      advisor.SitesFile = joinPath(work, "sites.jsonl");
    advisor.IR2VecVocab = Options.IR2VecVocab;
    advisor.IR2VecKind = Options.IR2VecKind;

    std::string interactiveLog = joinPath(work, "module.log");
    ModuleCommands commands;
    {
      // Only the interactive mode writes the log here (the compiler writes
      // the others'): no file is made that nothing writes, as a file made
      // and removed costs --explore one inode per trajectory.
      std::optional<OutputFile> log;
      if (Options.Mode == AdvisorMode::Interactive)
        if (llvm::Error e = log.emplace(interactiveLog).openError()) {
          writeFailed(record, std::move(e));
          return;
        }
      if (!adopt(module.Name, work, *in, advisor, record, commands)) {
        // The module's own plugin policy (a replay's decisions file) only
        // for a compile: an adopted trajectory needs none.
        if (Options.Mode == AdvisorMode::Plugin) {
          auto perModule = policy.pluginPolicyForModule(work);
          if (!perModule) {
            record.Reason = "policy_error";
            record.Detail = llvm::toString(perModule.takeError());
            return;
          }
          if (!perModule->empty())
            advisor.PluginPolicy = *perModule;
        }
        compile(*in, advisor, work, &policy, server, log ? &*log : nullptr, record, commands);
        keepChain(module.Name, work, record.Status == "ok");
      }
      // A full disk or a file size limit costs this module, not the run.
      if (llvm::Error e = log ? log->finish() : llvm::Error::success()) {
        if (record.Status == "interrupted")
          llvm::consumeError(std::move(e));
        else
          writeFailed(record, std::move(e));
      }
    }
    if (record.Status != "ok") {
      policy.abandonModule();
      return;
    }
    // Development mode and the plugin write the log themselves (the plugin only once it has a decision).
    bool compilerLogs = Options.Mode != AdvisorMode::Interactive;
    std::string produced = compilerLogs ? advisor.TrainingLog : interactiveLog;
    // A module without decisions gets no log (readers built like LLVM's
    // log_reader.py fail on a log without observations): an inliner module
    // without call sites, a regalloc module without evictions, or one that
    // never opened the channel (llc opens it at the first function body).
    bool hasLog = compilerLogs ? llvm::sys::fs::exists(produced) : record.Streams > 0;
    if (hasLog && compilerLogs && !checkDevelopmentLog(produced, record))
      return;
    hasLog = hasLog && record.Decisions > 0;
    if (llvm::Error e = policy.endModule(record.Decisions)) {
      record.Status = "failed";
      record.Reason = "policy_error";
      record.Detail = llvm::toString(std::move(e));
      return;
    }
    if (hasLog && Options.Mode == AdvisorMode::Interactive && isRegalloc(Options.Decisions)) {
      auto scores = regallocScores(commands.Remarks);
      if (!scores) {
        record.Status = "failed";
        record.Reason = "bad_remarks";
        record.Detail = "cannot compute regalloc rewards: " + llvm::toString(scores.takeError());
        return;
      }
      std::string rewarded = joinPath(work, "rewarded.log");
      auto total = addRegallocRewards(produced, rewarded, *scores);
      if (!total) {
        llvm::Error error = total.takeError();
        if (error.isA<WriteError>()) {
          writeFailed(record, std::move(error));
          return;
        }
        record.Status = "failed";
        record.Reason = "bad_training_log";
        record.Detail = "cannot add regalloc rewards: " + llvm::toString(std::move(error));
        return;
      }
      record.RegallocScore = *total;
      produced = rewarded;
    }

    auto size = berkeleyTextSize(commands.Native);
    if (!size) {
      record.Status = "failed";
      record.Reason = "no_native_object";
      record.Detail = llvm::toString(size.takeError());
      return;
    }
    record.NativeSize = *size;
    if (fillsBaselines())
      fillBaseline(module.Name, *in, *size);
    // --link: the object outlives the work directory until the link.
    if (Options.Link.stagesObjects())
      if (llvm::Error e = stageObject(commands.Native, module.Name)) {
        writeFailed(record, std::move(e));
        return;
      }
    if (!hasLog)
      return;
    if (sizeRewarded()) {
      std::optional<uint64_t> baseline = defaultSize(module.Name, *in, work, server, record);
      if (!baseline)
        return;
      record.DefaultSize = *baseline;
      record.Reward = sizeReward(*size, *baseline);
    }
    // The log appears under its final name only once the module is done.
    std::string destination = logPath(Options, module.Name);
    if (auto logs = openParentBeneath(Options.OutputDir, harvestLogName(module.Name), /*create=*/true); !logs) {
      record.Status = "failed";
      record.Reason = "write_failed";
      record.Detail = llvm::toString(logs.takeError());
      return;
    }
    if (!advisor.SitesFile.empty()) {
      if (!checkSites(advisor.SitesFile, record))
        return;
      placement.Sites = advisor.SitesFile;
      placement.SitesDestination = harvestSitesPath(Options.OutputDir, module.Name);
    }
    placement.Log = produced;
    placement.LogDestination = destination;
  }

  // Into OUT/.mlgo-harvest/objects/ as opened without following a link: a
  // link planted there is replaced, never written through.
  llvm::Error stageObject(const std::string &object, const std::string &module) {
    std::string staged = stagedObjectPath(Options.OutputDir, module);
    auto into = openParentBeneath(Options.OutputDir, stagedObjectName(module), /*create=*/true);
    if (!into)
      return into.takeError();
    if (Options.ExplicitTempsDir.empty())
      return moveFileInto(object, into->Dir.get(), into->Name, staged);
    // --explicit_temps_dir keeps the work directory whole.
    return copyFileInto(object, into->Dir.get(), into->Name, staged);
  }

  // The plugin writes one site per observation; a sites file that does not
  // align with the log would mislead every reader.
  bool checkSites(const std::string &path, ModuleRecord &record) {
    auto lines = countLines(path);
    if (lines && *lines == record.Decisions)
      return true;
    record.Status = "failed";
    record.Reason = "bad_decision_sites";
    record.Detail = lines ? "the plugin's sites file has " + std::to_string(*lines) + " records for " +
                                std::to_string(record.Decisions) + " decisions"
                          : "cannot read the plugin's sites file: " + llvm::toString(lines.takeError());
    return false;
  }

  bool checkDevelopmentLog(const std::string &path, ModuleRecord &record) {
    size_t observations = 0;
    double reward = 0; // regalloc: the sum of the functions' rewards
    if (llvm::Error error = visitLog(path, [&](TrainingLogReader &reader, TrainingLogReader::Event event) {
          observations += event == TrainingLogReader::Event::Observation;
          if (event == TrainingLogReader::Event::Outcome && reader.header().Score)
            reward += reader.header().Score->elementAsDouble(reader.outcome(), 0);
          return llvm::Error::success();
        })) {
      record.Status = "failed";
      record.Reason = "bad_training_log";
      record.Detail = "the log the compiler wrote is not a valid training log: " + llvm::toString(std::move(error));
      return false;
    }
    record.Decisions = observations;
    if (Options.Mode == AdvisorMode::Plugin && isRegalloc(Options.Decisions))
      record.RegallocScore = reward; // LLVM's RegAllocScore, computed by the plugin
    return true;
  }

  // The ordinary inliner's native size, computed once per module and cached.
  std::optional<uint64_t> defaultSize(const std::string &module, const ModuleInputs &in, const std::string &work,
                                      CompileServerClient *server, ModuleRecord &record) {
    {
      std::lock_guard<std::mutex> lock(SizesMutex);
      if (auto it = DefaultSizes.find(module); it != DefaultSizes.end()) {
        ++BaselinesCached;
        return it->second;
      }
    }
    // The shared cache, by what the baseline depends on (BaselineCache.h).
    std::optional<std::string> key;
    if (Baselines) {
      auto bitcode = llvm::MemoryBuffer::getFile(in.Bitcode, /*IsText=*/false, /*RequiresNullTerminator=*/false);
      if (bitcode) {
        key = baselineKey({Options.Decisions, Options.Compiler, CompilerIdentity, in.CommandLine},
                          (*bitcode)->getBuffer());
        std::string why;
        if (std::optional<uint64_t> cached = Baselines->lookup(*key, &why)) {
          ++BaselinesCached;
          remember(module, *cached);
          return cached;
        }
        if (why != "absent")
          log::warning(module + ": not using its baseline cache entry (" + why + "): recomputing it");
      }
    }
    std::string baselineWork = joinPath(work, "baseline");
    llvm::sys::fs::create_directories(baselineWork);
    AdvisorSetup none;
    none.Enabled = false; // the ordinary inliner
    ModuleRecord baseline;
    ModuleCommands commands;
    compile(in, none, baselineWork, nullptr, server, nullptr, baseline, commands);
    if (baseline.Status == "interrupted") {
      record.Status = "interrupted"; // not the module's failure: redone on resume
      return std::nullopt;
    }
    auto size = baseline.Status == "ok" ? berkeleyTextSize(commands.Native)
                                        : llvm::Expected<uint64_t>(llvm::createStringError(baseline.Detail));
    if (!size) {
      record.Status = "failed";
      record.Reason = "baseline_failed";
      record.Detail = "the default-inliner compile for the reward failed: " + llvm::toString(size.takeError());
      return std::nullopt;
    }
    ++BaselinesComputed;
    // A lost cache entry only costs a recompile.
    if (key)
      if (llvm::Error e = Baselines->store(*key, *size, module))
        log::warning(module + ": cannot store its baseline in the cache: " + llvm::toString(std::move(e)));
    remember(module, *size);
    return *size;
  }

  // A default harvest compiles exactly the baseline (the ordinary inliner's
  // code, byte for byte): with --baseline_cache, its sizes fill the cache.
  bool fillsBaselines() const {
    return Options.Decisions == Problem::Inliner && Options.Policy.How == PolicySpec::Kind::Default &&
           !Options.BaselineCacheDir.empty();
  }
  void fillBaseline(const std::string &module, const ModuleInputs &in, uint64_t size) {
    auto bitcode = llvm::MemoryBuffer::getFile(in.Bitcode, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!bitcode || !Baselines)
      return;
    std::string key =
        baselineKey({Options.Decisions, Options.Compiler, CompilerIdentity, in.CommandLine}, (*bitcode)->getBuffer());
    std::string why;
    if (Baselines->lookup(key, &why))
      return; // already there: entries are never rewritten by a mere equal
    // A lost cache entry only costs the next policy a recompile.
    if (llvm::Error e = Baselines->store(key, size, module))
      log::warning(module + ": cannot store its baseline in the cache: " + llvm::toString(std::move(e)));
    else
      ++BaselinesStored;
  }

  void remember(const std::string &module, uint64_t size) {
    std::lock_guard<std::mutex> lock(SizesMutex);
    DefaultSizes[module] = size;
    // A lost cache line only costs a recompile.
    llvm::consumeError(DefaultSizeCache.append({{"module", module}, {"native_size", size}}));
  }

public:
  std::atomic<size_t> BaselinesComputed{0}, BaselinesCached{0}, BaselinesStored{0};
  std::atomic<size_t> Adopted{0};

private:
  const HarvestOptions &Options;
  const CorpusDescription &Corpus;
  ReadExecRules ReadExec; // what every compile may read and execute, besides its module's input
  std::mutex SizesMutex;
  std::map<std::string, uint64_t> DefaultSizes;
  JournalAppender DefaultSizeCache;
  std::optional<BaselineCache> Baselines; // --baseline_cache
  std::string CompilerIdentity;
  mutable std::mutex StopMutex;
  std::optional<std::string> StopReason;
  std::atomic<bool> Stopped{false};
};

llvm::Expected<std::unique_ptr<Policy>> makePolicy(const HarvestOptions &options, const std::string &stderrPath) {
  switch (options.Policy.How) {
  case PolicySpec::Kind::TFLite:
    if (options.Mode == AdvisorMode::Plugin) {
      // The regalloc plugin has no probe: a model that cannot answer the
      // problem is refused here, before any compile, as interactively.
      if (isRegalloc(options.Decisions))
        if (auto model = makeTFLitePolicy(options.Policy.ModelDir, options.Decisions); !model)
          return model.takeError();
      return makeDefaultPolicy(); // the compiler loads the model and decides: no copy here
    }
    return makeTFLitePolicy(options.Policy.ModelDir, options.Decisions); // loaded once per worker
  case PolicySpec::Kind::Random:
    return makeRandomPolicy(options.Policy.Probability, options.Policy.Seed);
  case PolicySpec::Kind::Replay: {
    // A `then` may name the run's model or command only (PolicySpec).
    ReplayThen then{options.Policy.ModelDir, {}, stderrPath};
    if (!options.Policy.Command.empty()) {
      then.Exec.How = PolicySpec::Kind::Exec;
      then.Exec.Command = options.Policy.Command;
      then.Exec.ExecCertainty = options.Policy.ExecCertainty;
    }
    return makeReplayPolicy(options.Policy.ReplayFile, then);
  }
  case PolicySpec::Kind::Exec:
    return makeExecPolicy(options.Policy.Command, stderrPath, options.Policy.ExecCertainty);
  default:
    return makeDefaultPolicy(); // model: the compiler decides (development mode)
  }
}

// --link, once every module is compiled (LinkStep.h).
// The link order: --link_order, else the one extract-ir recorded, else the corpus'.
llvm::Expected<std::vector<std::string>> linkOrderOf(const HarvestOptions &options, const CorpusDescription &corpus,
                                                     const std::vector<PlannedModule> &plan, std::string &source) {
  std::vector<std::string> planned;
  for (const PlannedModule &module : plan)
    planned.push_back(module.Name);
  if (!options.Link.OrderFile.empty()) {
    auto listed = readLinkOrderFile(options.Link.OrderFile);
    if (!listed)
      return listed.takeError();
    source = options.Link.OrderFile;
    return linkOrder(corpus.Modules, planned, &*listed, "--link_order: " + options.Link.OrderFile);
  }
  auto recorded = readLinkOrder(options.CorpusDir);
  if (!recorded)
    return recorded.takeError();
  if (*recorded) {
    source = joinPath(options.CorpusDir, LinkOrderFile);
    return linkOrder(corpus.Modules, planned, &(*recorded)->Modules, source);
  }
  source = "corpus";
  return linkOrder(corpus.Modules, planned, nullptr, "");
}

// --baseline_cache with --link: the default policy's link stores its sizes,
// keyed by its modules' baseline keys and the template; another policy's
// link finds them there, so it is compared with the default without
// relinking (docs/harvest-logs.md#linked-size).
void keepOrFindDefaultLink(const HarvestOptions &options, const Harvest &harvest, const std::vector<std::string> &order,
                           LinkResult &result) {
  std::vector<std::string> keys;
  for (const std::string &module : order) {
    std::optional<std::string> key = harvest.baselineKeyOf(module);
    if (!key) {
      result.BaselineStatus = "absent";
      result.BaselineReason = "cannot compute the baseline key of " + module;
      return;
    }
    keys.push_back(std::move(*key));
  }
  const BaselineCache &cache = *harvest.baselineCache();
  auto key = [&](const char *what) {
    return linkedBaselineKey(keys, options.Link.Words, options.Link.ExtraObjects, what);
  };
  if (options.Policy.How == PolicySpec::Kind::Default) {
    if (!result.ok())
      return;
    llvm::Error stored = cache.store(key("text"), result.Sizes->Text, "(linked text)");
    if (!stored)
      stored = cache.store(key("allocated"), result.Sizes->allocated(), "(linked allocated)");
    result.BaselineStatus = stored ? "absent" : "stored";
    result.BaselineReason = stored ? "cannot store it: " + llvm::toString(std::move(stored)) : "";
    if (!stored)
      result.DefaultText = result.Sizes->Text, result.DefaultAllocated = result.Sizes->allocated();
    return;
  }
  std::string why;
  result.DefaultText = cache.lookup(key("text"), &why);
  if (result.DefaultText)
    result.DefaultAllocated = cache.lookup(key("allocated"), &why);
  if (result.DefaultText && result.DefaultAllocated) {
    result.BaselineStatus = "cached";
    return;
  }
  result.DefaultText.reset();
  result.BaselineStatus = "absent";
  result.BaselineReason = why == "absent" ? "the cache has no default-policy link of these modules with this template "
                                            "(harvest them with --policy=default and the same --link and cache)"
                                          : why;
}

void logLinkResult(const LinkResult &result) {
  if (result.ok())
    log::info("linked " + std::to_string(result.Objects) + " objects: " + result.Output + ", text " +
              std::to_string(result.Sizes->Text) + " bytes, allocated " + std::to_string(result.Sizes->allocated()));
  else
    log::error("link " + result.Status + ": " + result.Reason);
}

LinkResult linkProgram(const HarvestOptions &options, const Harvest &harvest, const std::vector<std::string> &order,
                       const std::string &orderSource, const std::map<std::string, HarvestRecord> &done,
                       const HarvestSummary &summary) {
  if (summary.Interrupted || summary.Stopped) {
    LinkResult result;
    result.OrderSource = orderSource;
    result.Reason = summary.Interrupted ? "the harvest was interrupted" : "the harvest stopped: " + *summary.Stopped;
    return result;
  }
  LinkRequest request{options.Link,
                      options.OutputDir,
                      order,
                      orderSource,
                      {},
                      options.CompilerWritableDirs,
                      options.CompilerReadableDirs};
  for (const std::string &module : order)
    if (auto it = done.find(module); it == done.end() || !it->second.ok())
      request.NotOk.push_back(module + " (" + (it == done.end() ? "not compiled" : it->second.Status) + ")");
  LinkResult result = linkHarvest(request);
  if (harvest.baselineCache())
    keepOrFindDefaultLink(options, harvest, order, result);
  logLinkResult(result);
  return result;
}

llvm::Error writeDataset(const HarvestOptions &options, const std::vector<PlannedModule> &plan,
                         const std::map<std::string, HarvestRecord> &done) {
  std::map<std::string, const HarvestRecord *> records;
  for (const auto &[name, record] : done)
    records.emplace(name, &record);
  auto totals = writeTFRecordDataset(harvestDatasetInputs(options.Decisions, options.OutputDir, plan, records),
                                     options.TFRecordPath);
  return totals ? llvm::Error::success() : totals.takeError();
}

} // namespace

std::string harvestJournalPath(llvm::StringRef outputDir) { return joinPath(outputDir, "harvest.jsonl"); }

llvm::Error removeDeadHarvestTemporaries(llvm::StringRef outputDir, unsigned exploreRounds) {
  // What harvest-logs (and its --explore) writes at OUT's top through a
  // temporary and a rename: the logs are modules' data and are not listed.
  static const std::set<std::string, std::less<>> OwnFiles = {"summary.json", "harvest.jsonl", "explore.jsonl",
                                                              "profile_max.json", "profile_pol.json"};
  auto top = removeStaleTemporaries(outputDir, "", OwnFiles);
  if (!top)
    return top.takeError();
  if (exploreRounds == 0)
    return llvm::Error::success();
  auto explored = removeStaleTemporaries(outputDir, "explore", [&](llvm::StringRef stem) {
    unsigned round;
    return stem.consume_front("round-") && stem.consume_back(".jsonl") && !stem.empty() && stem.front() != '0' &&
           llvm::all_of(stem, llvm::isDigit) && !stem.getAsInteger(10, round) && round >= 1 && round <= exploreRounds;
  });
  return explored ? llvm::Error::success() : explored.takeError();
}

bool decisionSitesWritten(const HarvestOptions &o) { return o.DecisionSites && o.Mode == AdvisorMode::Plugin; }

std::string decisionSitesUnavailable(const HarvestOptions &o) {
  return std::string("no sites files in ") + modeName(o.Mode) +
         " mode: the compiler does not say which call site it asks about (the plugin does: --mode=plugin)";
}

nlohmann::ordered_json harvestJournalOptions(const HarvestOptions &o) {
  nlohmann::ordered_json j;
  j["corpus"] = o.CorpusDir;
  j["problem"] = problemName(o.Decisions);
  j["compiler"] = o.Compiler.Kind == CompilerKind::Opt ? "opt" : o.Compiler.Kind == CompilerKind::Llc ? "llc" : "clang";
  if (o.Compiler.Kind == CompilerKind::Opt) {
    j["opt_path"] = o.Compiler.Opt;
    j["passes"] = o.Compiler.Passes;
  }
  if (o.Compiler.Kind != CompilerKind::Clang)
    j["llc_path"] = o.Compiler.Llc;
  else
    j["clang_path"] = o.Compiler.Clang;
  if (!o.Compiler.ExtraFlags.empty())
    j["extra_compiler_flags"] = o.Compiler.ExtraFlags;
  // What shapes the log, not how --mode=auto chose: the plugin writes the
  // interactive mode's log byte for byte, so a shard whose plugin probe
  // failed once (and ran interactive) still resumes its own journal.
  j["log_format"] = o.Mode == AdvisorMode::Development ? "development" : "interactive";
  // Absent unless written: earlier journals stay comparable.
  if (decisionSitesWritten(o))
    j["decision_sites"] = true;
  // The embeddings in the logs depend on the vocabulary's content, not on
  // where it lies.
  if (!o.IR2VecVocab.empty())
    j["ir2vec"] = {{"vocab_sha256", o.IR2VecVocabSha256},
                   {"dimension", o.IR2VecDimension},
                   {"kind", o.IR2VecKind.empty() ? "default" : o.IR2VecKind}};
  j["policy"] = o.Policy.describe();
  // A shard directory belongs to one shard of one N (a resubmitted task
  // with another index must not mix its modules into it).
  j["shard"] = shardSpec(o.Selection);
  return j;
}

std::string shardSpec(const ModuleSelection &selection) {
  return std::to_string(selection.ShardIndex) + "/" + std::to_string(selection.ShardCount);
}

nlohmann::ordered_json HarvestSummary::toJson(const HarvestOptions &o) const {
  nlohmann::ordered_json j;
  j["mlgo_version"] = versionString();
  j["corpus"] = o.CorpusDir;
  j["problem"] = problemName(o.Decisions);
  j["compiler"] = o.Compiler.Kind == CompilerKind::Opt ? "opt" : o.Compiler.Kind == CompilerKind::Llc ? "llc" : "clang";
  j["mode"] = modeName(o.Mode);
  j["mode_reason"] = o.ModeReason;
  j["policy"] = o.Policy.describe();
  j["shard"] = shardSpec(o.Selection);
  j["confinement"] = {{"active", Confinement.Abi > 0},
                      {"landlock_abi", Confinement.Abi},
                      {"warning", Confinement.Abi > 0 ? "" : "compiles were not confined: " + Confinement.Problem}};
  if (Confinement.Abi > 0) { // besides these, each compile reads its work directory and its module's input
    ReadExecRules rules = harvestReadExecRules(o);
    j["confinement"]["readable"] = rules.Readable;
    j["confinement"]["executable"] = rules.Executable;
  }
  j["compile_server"] = {{"used", o.UseCompileServer},
                         {"reason", o.CompileServerReason},
                         {"peak_rss_kb", CompileServerPeakRssKb},
                         {"starts", CompileServerStarts}};
  j["baselines"] = {{"computed", BaselinesComputed}, {"cached", BaselinesCached}};
  if (BaselinesStored)
    j["baselines"]["stored"] = BaselinesStored;
  if (o.Adopt.Round)
    j["adopted_from_chains"] = Adopted;
  if (o.DecisionSites)
    j["decision_sites"] = {{"written", decisionSitesWritten(o)},
                           {"reason", decisionSitesWritten(o) ? "" : decisionSitesUnavailable(o)}};
  if (Linked)
    j["linked"] = Linked->toJson();
  j["interrupted"] = Interrupted;
  if (Stopped)
    j["stopped"] = *Stopped;
  j["modules"] = {{"planned", Planned},      {"ok", Ok},
                  {"failed", Failed},        {"timeout", TimedOut},
                  {"skipped_done", Skipped}, {"without_log", WithoutLog}};
  j["decisions"] = Decisions;
  j["seconds"] = Seconds;
  j["decisions_per_second"] = Seconds > 0 ? Decisions / Seconds : 0.0;
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage); // the harvester's own memory, not its compilers'
  j["harvester_peak_rss_kb"] = usage.ru_maxrss;
  j["harvester_cpu_seconds"] = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                               static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  return j;
}

llvm::Expected<LinkResult> relinkHarvest(const HarvestOptions &options) {
  auto corpus = readCorpusDescription(options.CorpusDir);
  if (!corpus)
    return corpus.takeError();
  auto plan = planModules(*corpus, options.CorpusDir, options.Selection);
  if (!plan)
    return plan.takeError();
  std::string orderSource;
  auto order = linkOrderOf(options, *corpus, *plan, orderSource);
  if (!order)
    return order.takeError();
  auto journal = readHarvestJournal(harvestJournalPath(options.OutputDir));
  if (!journal)
    return journal.takeError();
  std::map<std::string, const HarvestRecord *> latest;
  for (const HarvestJournalLine &line : journal->Latest)
    latest[line.Record.Module] = &line.Record;
  LinkRequest request{options.Link,
                      options.OutputDir,
                      *order,
                      orderSource,
                      {},
                      options.CompilerWritableDirs,
                      options.CompilerReadableDirs};
  for (const std::string &module : *order)
    if (auto it = latest.find(module); it == latest.end() || !it->second->ok())
      request.NotOk.push_back(module + " (" + (it == latest.end() ? "not compiled" : it->second->Status) + ")");
  LinkResult result = linkHarvest(request);
  logLinkResult(result);
  return result;
}

llvm::Expected<HarvestSummary> runHarvest(const HarvestOptions &options) {
  // Before anything in the output directory is read or removed; the lock's
  // directory made without following a link planted in its place.
  if (std::error_code ec = llvm::sys::fs::create_directories(options.OutputDir))
    return llvm::createStringError(ec, "cannot create %s: %s", options.OutputDir.c_str(), ec.message().c_str());
  if (llvm::Error e = makeDirectoriesBeneath(options.OutputDir, ".mlgo-harvest"))
    return e;
  auto lock = DirectoryLock::acquire(options.OutputDir, joinPath(options.OutputDir, ".mlgo-harvest"));
  if (!lock)
    return lock.takeError();
  // Ours now: what a killed run left half-written goes (StaleTemporaries.h).
  if (llvm::Error e = removeDeadHarvestTemporaries(options.OutputDir))
    return e;
  auto corpus = readCorpusDescription(options.CorpusDir);
  if (!corpus)
    return corpus.takeError();
  auto plan = planModules(*corpus, options.CorpusDir, options.Selection);
  if (!plan)
    return plan.takeError();
  {
    // A staged object copied in from another file system (--explicit_temps_dir)
    // goes through a temporary beside it (MoveFile.h).
    std::set<std::string, std::less<>> objects;
    for (const PlannedModule &module : *plan)
      objects.insert(workDirectoryName(module.Name) + ".o");
    auto removed = removeStaleTemporaries(options.OutputDir, ".mlgo-harvest/objects", objects);
    if (!removed)
      return removed.takeError();
  }
  std::vector<std::string> order; // --link: checked before anything is compiled
  std::string orderSource;
  if (options.Link.requested()) {
    auto ordered = linkOrderOf(options, *corpus, *plan, orderSource);
    if (!ordered)
      return ordered.takeError();
    order = std::move(*ordered);
  }

  // A dying compiler or policy must not kill us, nor a file size limit
  // (writes fail with EFBIG instead: write_failed); children get both back.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
  Harvest harvest(options, *corpus);
  if (llvm::Error e = harvest.prepare())
    return e;

  // Resume: modules whose latest journal line is ok and whose log (if it
  // wrote one) exists. The journal must come from the same options.
  std::string journalPath = harvestJournalPath(options.OutputDir);
  nlohmann::ordered_json journalOptions = harvestJournalOptions(options);
  auto earlier = readHarvestJournal(journalPath);
  if (!earlier)
    return earlier.takeError();
  JournalContents header; // the options check of the shared journal
  header.Options = earlier->Options;
  if (!earlier->Latest.empty())
    header.Records.emplace_back();
  if (earlier->Options && earlier->Options->contains("shard") &&
      (*earlier->Options)["shard"] != journalOptions["shard"])
    return llvm::createStringError("%s was written by shard %s, and this run is shard %s: every shard needs its own "
                                   "--output_dir (a Slurm task rerun must get the same index and N; docs/cluster.md)",
                                   journalPath.c_str(), (*earlier->Options)["shard"].dump().c_str(),
                                   journalOptions["shard"].dump().c_str());
  if (llvm::Error e =
          checkJournalOptions(header, journalOptions, journalPath,
                              "Its logs would not be comparable: use another --output_dir, or the earlier options."))
    return e;
  std::map<std::string, HarvestRecord> done;
  for (HarvestJournalLine &line : earlier->Latest) {
    // The journal describes every log: one its record does not promise (a
    // module that failed after an earlier version left its log) goes.
    auto present = line.Record.hasLog() ? llvm::Expected<bool>(false)
                                        : existsBeneath(options.OutputDir, harvestLogName(line.Record.Module));
    if (!present)
      return present.takeError();
    if (*present) {
      log::info(line.Record.Module + ": removing logs/" + line.Record.Module + ".log, which its journal record (" +
                line.Record.Status + ", log_written " + (line.Record.LogWritten ? "true" : "false") +
                ") does not describe");
      if (llvm::Error e = removeLog(options, line.Record.Module))
        return llvm::createStringError("cannot remove %s: %s", logPath(options, line.Record.Module).c_str(),
                                       llvm::toString(std::move(e)).c_str());
    }
    done.emplace(line.Record.Module, std::move(line.Record));
  }
  JournalAppender journal;
  if (llvm::Error e = journal.open(journalPath, /*truncate=*/false, journalOptions))
    return e;
  std::vector<size_t> todo;
  HarvestSummary summary;
  summary.Confinement = landlockSupport();
  if (summary.Confinement.Abi == 0)
    log::warning("compiles run without write confinement: " + summary.Confinement.Problem + " (docs/security.md)");
  summary.Planned = plan->size();
  size_t recompiledForLink = 0;
  for (size_t i = 0; i < plan->size(); ++i) {
    const std::string &name = (*plan)[i].Name;
    auto it = done.find(name);
    bool finished = it != done.end() && it->second.ok();
    if (finished && it->second.LogWritten) {
      // A present log is a regular file: one planted as a link (to another
      // valid log) is named, never taken as this module's trajectory.
      auto log = openRegularFileBeneath(options.OutputDir, harvestLogName(name));
      if (!log) {
        llvm::Error error = log.takeError();
        if (!consumeIfMissing(error))
          return std::move(error);
      }
      finished = static_cast<bool>(log);
    }
    // --link needs every object: one removed after an earlier link is made
    // again, and so is anything but a regular file reached through no link.
    bool objectMissing = false;
    if (finished && options.Link.stagesObjects()) {
      auto object = openRegularFileBeneath(options.OutputDir, stagedObjectName(name));
      if (!object) {
        llvm::Error error = object.takeError();
        if (!consumeIfMissing(error))
          log::warning("--link: " + name + ": compiling again: " + llvm::toString(std::move(error)));
        objectMissing = true;
      }
    }
    recompiledForLink += objectMissing && !options.Force;
    if (finished && !objectMissing && !options.Force)
      ++summary.Skipped;
    else
      todo.push_back(i);
  }
  if (recompiledForLink)
    log::info("--link: compiling again " + std::to_string(recompiledForLink) +
              " modules done by an earlier run whose objects are gone (--keep_objects keeps them)");
  if (summary.Skipped)
    log::info("resuming: " + std::to_string(summary.Skipped) + " of " + std::to_string(plan->size()) +
              " modules are already done (--force redoes them)");

  unsigned workers = options.NumWorkers ? options.NumWorkers : std::max(1u, std::thread::hardware_concurrency());
  tbb::task_arena arena(static_cast<int>(workers));
  std::vector<std::unique_ptr<Policy>> policies(workers + 1);
  for (size_t slot = 0; slot < policies.size(); ++slot) {
    auto made = makePolicy(options, joinPath(options.OutputDir, "policy." + std::to_string(slot) + ".stderr"));
    if (!made)
      return made.takeError();
    policies[slot] = std::move(*made);
  }

  // One compile server per worker slot, started at its first compile.
  std::vector<std::unique_ptr<CompileServerClient>> servers(workers + 1);
  if (options.UseCompileServer)
    for (size_t slot = 0; slot < servers.size(); ++slot)
      servers[slot] = std::make_unique<CompileServerClient>(CompileServerSettings{
          options.CompileServerPath,
          options.Mode == AdvisorMode::Plugin ? std::vector<std::string>{options.PluginPath}
                                              : std::vector<std::string>{},
          // The plugin (inliner or regalloc) loads once per server; only the
          // inliner's has a policy to prepare.
          options.Mode == AdvisorMode::Plugin && options.Decisions == Problem::Inliner ? pluginPolicy(options.Policy)
                                                                                       : "",
          joinPath(joinPath(options.OutputDir, ".mlgo-harvest"), "compile-server." + std::to_string(slot) + ".stderr"),
          options.Compiler.Kind == CompilerKind::Clang});

  // The plan lists the largest modules first; each worker takes the next one
  // when it is free. (Split into ranges, the second worker started half-way
  // down the list and big modules ran last, beside an idle worker.)
  std::atomic<size_t> nextTodo{0};

  Progress progress("modules", todo.size(), options.ProgressInterval);
  // Placing logs and appending the journal: one thread, after the workers'
  // compiles, so that a worker's next compile need not wait for the disk.
  SerialQueue committer(PendingPlacementsPerWorker * workers);
  auto start = Clock::now();
  arena.execute([&] {
    tbb::parallel_for(0u, workers, [&](unsigned) {
      for (size_t k; (k = nextTodo.fetch_add(1)) < todo.size();) {
        if (interruptRequested() || harvest.stopped())
          return;
        int slot = tbb::this_task_arena::current_thread_index();
        size_t at = slot >= 0 && static_cast<size_t>(slot) < policies.size() ? slot : workers;
        Policy &policy = *policies[at];
        size_t i = todo[k];
        HarvestedModule done = harvest.harvest((*plan)[i], i, policy, servers[at].get());
        // Not recorded: redone on resume (its log was never placed).
        if (done.Record.Status == "interrupted")
          return;
        // The syncs and the journal line on the committing thread, in order.
        committer.submit([&, done = std::move(done)]() mutable {
          harvest.place(done);
          ModuleRecord &record = done.Record;
          // Redone and without a log now (failed, timed out, no decisions): the
          // earlier run's log goes before the record that says so is written.
          if (!record.LogWritten)
            if (llvm::Error e = removeLog(options, record.Module))
              harvest.stop("cannot remove the earlier log of " + record.Module + ": " + llvm::toString(std::move(e)));
          if (llvm::Error e = journal.append(record.toJson()))
            harvest.stop(llvm::toString(std::move(e))); // finished modules are kept; the rest are redone
          if (record.Status != "ok")
            log::info(record.Module + ": " + record.Status + ": " + record.Detail);
          summary.Decisions += record.Decisions;
          progress.count(record.Decisions, "decisions");
          progress.advance(record.Status == "ok");
        });
        reapOrphans(); // what our children left behind, adopted as their subreaper
      }
    });
  });
  committer.drain();
  progress.finish();
  policies.clear();
  for (const auto &server : servers)
    if (server) {
      summary.CompileServerPeakRssKb = std::max(summary.CompileServerPeakRssKb, server->peakRssKb());
      summary.CompileServerStarts += server->starts();
    }
  servers.clear();
  summary.Seconds = std::chrono::duration<double>(Clock::now() - start).count();
  summary.BaselinesComputed = harvest.BaselinesComputed;
  summary.BaselinesCached = harvest.BaselinesCached;
  summary.BaselinesStored = harvest.BaselinesStored;
  summary.Adopted = harvest.Adopted;
  if (llvm::Error e = journal.close())
    harvest.stop(llvm::toString(std::move(e)));
  summary.Interrupted = interruptRequested();
  summary.Stopped = harvest.stopReason();

  // The journal, compacted to the latest line of every module it names,
  // whatever this run's selection: it describes every log in OUT/logs.
  auto latest = readHarvestJournal(journalPath);
  if (!latest)
    return latest.takeError();
  std::vector<nlohmann::ordered_json> compacted;
  done.clear();
  for (HarvestJournalLine &line : latest->Latest) {
    compacted.push_back(nlohmann::ordered_json::parse(line.Text)); // as written (it parsed once)
    done[line.Record.Module] = std::move(line.Record);
  }
  for (const PlannedModule &module : *plan) {
    auto it = done.find(module.Name);
    if (it == done.end())
      continue;
    const std::string &status = it->second.Status;
    summary.Ok += status == "ok";
    summary.WithoutLog += status == "ok" && !it->second.LogWritten;
    summary.Failed += status == "failed";
    summary.TimedOut += status == "timeout";
  }
  if (options.Link.requested())
    summary.Linked = linkProgram(options, harvest, order, orderSource, done, summary);
  // A run that stopped on an unusable file system still says what it did:
  // the appended journal lines stay as they are if compaction fails, and
  // the summary goes to the log if it cannot be written.
  if (!summary.Interrupted)
    if (llvm::Error e = rewriteJournal(journalPath, journalOptions, compacted)) {
      if (!summary.Stopped)
        return e;
      log::warning("cannot compact the journal (it keeps its appended lines): " + llvm::toString(std::move(e)));
    }
  std::string summaryText = summary.toJson(options).dump(2) + "\n";
  if (llvm::Error e = writeFileAtomically(joinPath(options.OutputDir, "summary.json"), summaryText)) {
    if (!summary.Stopped)
      return e;
    log::error(llvm::toString(std::move(e)) + "; the summary:\n" + summaryText);
  }
  if (!summary.Interrupted && !summary.Stopped && !options.TFRecordPath.empty())
    if (llvm::Error e = writeDataset(options, *plan, done))
      return e;
  return summary;
}

} // namespace mlgo
