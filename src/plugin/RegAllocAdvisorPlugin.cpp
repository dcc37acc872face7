// libMLGORegAllocAdvisor.so: a codegen plugin for llc-22 (-load) that records
// the default eviction advisor's decisions as a development-mode training log
// on a stock LLVM, which has no "include default" flag for register
// allocation:
//
//   llc-22 -O2 -load libMLGORegAllocAdvisor.so -mlgo-regalloc-log=m.log m.bc
//
// RAGreedy gets our eviction advisor. Per query it asks LLVM's default advisor
// (whose answer it returns: the allocation is plain llc's) and LLVM's ML
// advisor, which computes the features. The ML advisor talks to its model
// over LLVM's interactive channel; here that channel is a pair of FIFOs served
// by a thread of this process, which logs each observation with the default's
// choice as the column the ML advisor uses (index_to_evict) and replies that
// column. The ML advisor then picks the register at that column: every query
// checks that it is the default's register (else the compile fails). After
// allocation, each function with observations gets LLVM's RegAllocScore as
// its reward.
#include "EvictionCandidateIndex.h"
#include "RegAllocScoreBinding.h"
#include "mlgo/log/TrainingLog.h"

#include "llvm/CodeGen/LiveInterval.h"
#include "llvm/CodeGen/MachineBlockFrequencyInfo.h"
#include "llvm/CodeGen/MachineFunction.h"
#include "llvm/CodeGen/MachineFunctionPass.h"
#include "llvm/CodeGen/Passes.h"
#include "llvm/CodeGen/RegAllocEvictionAdvisor.h"
#include "llvm/CodeGen/TargetPassConfig.h"
#include "llvm/CodeGen/TargetRegisterInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/RegisterTargetPassConfigCallback.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace {

cl::OptionCategory Category("MLGO register-allocation plugin (libMLGORegAllocAdvisor.so)");

cl::opt<std::string> LogOption("mlgo-regalloc-log", cl::cat(Category),
                               cl::desc("Write the default eviction advisor's training log (development-mode "
                                        "format: LLVM's eviction features, index_to_evict, per-function reward) "
                                        "to this file. Environment: MLGO_REGALLOC_LOG. Without it the plugin "
                                        "changes nothing."));

std::string logPath() {
  if (LogOption.getNumOccurrences())
    return LogOption;
  const char *value = std::getenv("MLGO_REGALLOC_LOG");
  return value ? value : "";
}

// The log and the channel, shared by the advisor (compile thread) and the
// channel's server thread.
class EvictionTrace {
public:
  explicit EvictionTrace(std::string path) : Path(std::move(path)) {}

  // Creates the FIFOs beside the log (the compile's own work directory) and
  // points LLVM's ML advisor at them.
  bool prepare(LLVMContext &ctx) {
    ChannelBase = Path + ".channel";
    for (const char *suffix : {".in", ".out"}) {
      std::string fifo = ChannelBase + suffix;
      ::unlink(fifo.c_str());
      if (::mkfifo(fifo.c_str(), 0600) != 0) {
        ctx.emitError("mlgo-regalloc: cannot create " + fifo + ": " + std::strerror(errno));
        return false;
      }
    }
    auto *channel = static_cast<cl::opt<std::string> *>(
        cl::getRegisteredOptions().lookup("regalloc-evict-interactive-channel-base"));
    if (!channel) {
      ctx.emitError("mlgo-regalloc: this LLVM has no -regalloc-evict-interactive-channel-base");
      return false;
    }
    channel->setValue(ChannelBase);
    return true;
  }

  // Started just before the ML advisor's model runner opens the channel (its
  // first advisor): LLVM opens the inbound FIFO, then the outbound one.
  void startServer() {
    if (!Server.joinable())
      Server = std::thread([this] { serve(); });
  }

  // After the model runner has closed its end (its provider is gone).
  void finish() {
    if (Server.joinable())
      Server.join();
    for (const char *suffix : {".in", ".out"})
      ::unlink((ChannelBase + suffix).c_str());
    if (Log)
      Log->flush();
  }

  void setPendingColumn(int64_t column) { PendingColumn = column; }
  uint64_t answered() const { return Answered; }

  // Writes the function's reward as the outcome of its last observation, if
  // it had any (the others carry 0, as development mode logs them).
  void reward(float score) {
    std::lock_guard<std::mutex> lock(Mutex);
    writeOutcome(score);
  }

  std::string serverError() {
    std::lock_guard<std::mutex> lock(Mutex);
    return ServerError;
  }

private:
  void serve() {
    int inbound = ::open((ChannelBase + ".in").c_str(), O_WRONLY | O_CLOEXEC);
    int outbound = ::open((ChannelBase + ".out").c_str(), O_RDONLY | O_CLOEXEC);
    if (inbound < 0 || outbound < 0) {
      fail(std::string("cannot open the channel: ") + std::strerror(errno));
      if (inbound >= 0)
        ::close(inbound);
      if (outbound >= 0)
        ::close(outbound);
      return;
    }
    mlgo::TrainingLogReader reader(outbound, ChannelBase + ".out", /*owned=*/true);
    while (true) {
      auto event = reader.next();
      if (!event) {
        fail(toString(event.takeError()));
        break;
      }
      if (*event == mlgo::TrainingLogReader::Event::End)
        break;
      std::lock_guard<std::mutex> lock(Mutex);
      if (*event == mlgo::TrainingLogReader::Event::Header) {
        if (LogHeader || !reader.header().Advice) {
          ServerError = "unexpected channel header";
          break;
        }
        LogHeader.emplace();
        LogHeader->Features = reader.header().Features;
        LogHeader->Features.push_back(*reader.header().Advice); // index_to_evict, as development mode logs it
        LogHeader->Score = mlgo::TensorSpec{"reward", mlgo::ElementType::Float, {1}, 0};
        Mask = reader.header().find("mask");
        if (!Mask || reader.header().Features[*Mask].elementCount() != mlgo::EvictCandidateColumn + 1) {
          ServerError = "the eviction channel has no 33-column mask";
          break;
        }
      } else if (*event == mlgo::TrainingLogReader::Event::Context) {
        // A function comes back for each greedy run (x86: tile registers,
        // then the rest); its reward still goes on its very last observation.
        if (reader.context() != Context) {
          writeOutcome(0);
          Context = reader.context();
          if (Writer)
            Writer->switchContext(Context);
        }
      } else if (*event == mlgo::TrainingLogReader::Event::Observation) {
        // The log is created at the first observation: a module without any
        // (no function bodies, llc -O0, no eviction) leaves no file.
        if (!Writer && Logging)
          Logging = openLog();
        writeOutcome(0);
        int64_t column = PendingColumn;
        // A column the mask forbids is undefined behaviour in LLVM (it
        // crashes): reply an allowed one and fail the compile instead.
        const mlgo::TensorSpec &maskSpec = reader.header().Features[*Mask];
        StringRef mask = reader.feature(*Mask);
        if (maskSpec.elementAsInt(mask, static_cast<size_t>(column)) != 1) {
          ServerError = "the default's column " + std::to_string(column) + " is masked in observation " +
                        std::to_string(reader.observationIndex()) + " of " + reader.context();
          for (size_t i = 0; i < maskSpec.elementCount(); ++i)
            if (maskSpec.elementAsInt(mask, i) == 1) {
              column = static_cast<int64_t>(i);
              break;
            }
        }
        StringRef reply(reinterpret_cast<const char *>(&column), sizeof column);
        // A failure to log fails the compile (reward pass) but never stops
        // the replies: LLVM waits for every one.
        if (Logging) {
          if (Error e = Writer->observationRaw({reader.observation(), reply})) {
            ServerError = toString(std::move(e));
            Logging = false;
          }
        }
        OutcomePending = Logging;
        ++Answered;
        if (::write(inbound, &column, sizeof column) != static_cast<ssize_t>(sizeof column)) {
          ServerError = std::string("cannot reply on the channel: ") + std::strerror(errno);
          break;
        }
      } else {
        ServerError = "an outcome record on the interactive channel";
        break;
      }
    }
    ::close(inbound);
  }

  // Under Mutex.
  bool openLog() {
    std::error_code error;
    Log = std::make_unique<raw_fd_ostream>(Path, error);
    if (error) {
      ServerError = "cannot write " + Path + ": " + error.message();
      return false;
    }
    Writer = std::make_unique<mlgo::TrainingLogWriter>(*Log, *LogHeader);
    Writer->switchContext(Context);
    return true;
  }

  // The outcome of the last observation, if it has none yet. Under Mutex.
  void writeOutcome(float score) {
    if (!OutcomePending || !Writer)
      return;
    OutcomePending = false;
    if (Error e = Writer->outcome(StringRef(reinterpret_cast<const char *>(&score), sizeof score)))
      ServerError = toString(std::move(e));
  }

  void fail(std::string message) {
    std::lock_guard<std::mutex> lock(Mutex);
    ServerError = std::move(message);
  }

  std::string Path, ChannelBase;
  std::unique_ptr<raw_fd_ostream> Log;
  std::optional<mlgo::LogHeader> LogHeader;
  std::unique_ptr<mlgo::TrainingLogWriter> Writer;
  std::thread Server;
  std::mutex Mutex;
  std::string ServerError;
  std::string Context;
  std::optional<size_t> Mask;
  bool OutcomePending = false;
  bool Logging = true;
  std::atomic<int64_t> PendingColumn{mlgo::EvictCandidateColumn};
  std::atomic<uint64_t> Answered{0};
};

class RecordingEvictionAdvisor final : public RegAllocEvictionAdvisor {
public:
  RecordingEvictionAdvisor(const MachineFunction &MF, const RAGreedy &RA, std::unique_ptr<RegAllocEvictionAdvisor> ML,
                           EvictionTrace &Trace)
      : RegAllocEvictionAdvisor(MF, RA), Default(MF, RA), ML(std::move(ML)), Trace(Trace) {}

private:
  const RegAllocEvictionAdvisor &defaultAdvisor() const { return Default; }

  MCRegister tryFindEvictionCandidate(const LiveInterval &VirtReg, const AllocationOrder &Order,
                                      uint8_t CostPerUseLimit, const SmallVirtRegSet &Fixed) const override {
    MCRegister chosen = defaultAdvisor().tryFindEvictionCandidate(VirtReg, Order, CostPerUseLimit, Fixed);
    std::optional<unsigned> limit = getOrderLimit(VirtReg, Order, CostPerUseLimit);
    int64_t column = mlgo::EvictCandidateColumn;
    if (limit) {
      mlgo::AllocationState state{MF, *MRI, *TRI, RegClassInfo, VRM, Matrix};
      column = mlgo::evictionColumn(state, VirtReg.reg(), *limit, chosen);
    }
    Trace.setPendingColumn(column < 0 ? mlgo::EvictCandidateColumn : column);
    uint64_t before = Trace.answered();
    MCRegister mlChosen = ML->tryFindEvictionCandidate(VirtReg, Order, CostPerUseLimit, Fixed);
    // The ML advisor asks its model only when some column is available; when
    // it did, the register it took at our column must be the default's.
    if (Trace.answered() != before && (column < 0 || mlChosen != chosen))
      MF.getFunction().getContext().emitError("mlgo-regalloc: in " + MF.getName() + ", the default evicts for " +
                                              TRI->getName(chosen.id()) + " but LLVM's ML advisor reads column " +
                                              std::to_string(column) + " as " + TRI->getName(mlChosen.id()));
    return chosen;
  }

  bool canEvictHintInterference(const LiveInterval &VirtReg, MCRegister PhysReg,
                                const SmallVirtRegSet &Fixed) const override {
    return defaultAdvisor().canEvictHintInterference(VirtReg, PhysReg, Fixed);
  }

  DefaultEvictionAdvisor Default;
  std::unique_ptr<RegAllocEvictionAdvisor> ML;
  EvictionTrace &Trace;
};

class RecordingProvider final : public RegAllocEvictionAdvisorProvider {
public:
  // Without a channel (`record` false, the error already reported) RAGreedy
  // still needs an advisor: the default one.
  RecordingProvider(LLVMContext &Ctx, EvictionTrace &Trace, bool record)
      : RegAllocEvictionAdvisorProvider(AdvisorMode::Default, Ctx),
        ML(record ? createReleaseModeAdvisorProvider(Ctx) : nullptr), Trace(Trace) {}

  std::unique_ptr<RegAllocEvictionAdvisor> getAdvisor(const MachineFunction &MF, const RAGreedy &RA,
                                                      MachineBlockFrequencyInfo *MBFI,
                                                      MachineLoopInfo *Loops) override {
    if (!ML)
      return std::make_unique<DefaultEvictionAdvisor>(MF, RA);
    Trace.startServer();
    return std::make_unique<RecordingEvictionAdvisor>(MF, RA, ML->getAdvisor(MF, RA, MBFI, Loops), Trace);
  }

  // Closes the ML advisor's channel (its model runner) before the trace ends.
  void closeChannel() { ML.reset(); }

private:
  std::unique_ptr<RegAllocEvictionAdvisorProvider> ML;
  EvictionTrace &Trace;
};

// Replaces the eviction advisor analysis RAGreedy asks for (same pass ID).
class RecordingEvictionAnalysis final : public RegAllocEvictionAdvisorAnalysisLegacy {
public:
  explicit RecordingEvictionAnalysis(std::shared_ptr<EvictionTrace> Trace)
      : RegAllocEvictionAdvisorAnalysisLegacy(AdvisorMode::Default), Trace(std::move(Trace)) {}

  ~RecordingEvictionAnalysis() override {
    if (Provider)
      static_cast<RecordingProvider &>(*Provider).closeChannel();
    Trace->finish();
  }

  bool doInitialization(Module &M) override {
    bool ready = Trace->prepare(M.getContext());
    Provider = std::make_unique<RecordingProvider>(M.getContext(), *Trace, ready);
    return false;
  }

private:
  std::shared_ptr<EvictionTrace> Trace;
};

// Runs right after the virtual register rewriter, where LLVM's own
// RegAllocScoring computes the development-mode reward.
class EvictionRewardPass final : public MachineFunctionPass {
public:
  static char ID;
  explicit EvictionRewardPass(std::shared_ptr<EvictionTrace> Trace)
      : MachineFunctionPass(ID), Trace(std::move(Trace)) {}

  StringRef getPassName() const override { return "MLGO register allocation reward"; }

  void getAnalysisUsage(AnalysisUsage &AU) const override {
    AU.setPreservesAll();
    AU.addRequired<MachineBlockFrequencyInfoWrapperPass>();
    MachineFunctionPass::getAnalysisUsage(AU);
  }

  bool runOnMachineFunction(MachineFunction &MF) override {
    double score = mlgo::regAllocScore(MF, getAnalysis<MachineBlockFrequencyInfoWrapperPass>().getMBFI());
    Trace->reward(static_cast<float>(score));
    std::string error = Trace->serverError();
    if (!error.empty())
      MF.getFunction().getContext().emitError("mlgo-regalloc: " + error);
    return false;
  }

private:
  std::shared_ptr<EvictionTrace> Trace;
};
char EvictionRewardPass::ID = 0;

RegisterTargetPassConfigCallback Install([](TargetMachine &, legacy::PassManagerBase &PM, TargetPassConfig *Config) {
  std::string path = logPath();
  if (path.empty())
    return;
  auto trace = std::make_shared<EvictionTrace>(path);
  PM.add(new RecordingEvictionAnalysis(trace));
  Config->insertPass(&VirtRegRewriterID, new EvictionRewardPass(trace));
});

} // namespace
