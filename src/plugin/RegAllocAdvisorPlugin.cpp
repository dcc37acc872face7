// libMLGORegAllocAdvisor.so: a codegen plugin for llc-22 (-load) that records
// the default register allocation advisors' decisions as development-mode
// training logs on a stock LLVM, which has no "include default" flag for
// register allocation:
//
//   llc-22 -O2 -load libMLGORegAllocAdvisor.so -mlgo-regalloc-log=m.log m.bc
//   llc-22 -O2 -load libMLGORegAllocAdvisor.so -mlgo-regalloc-priority-log=p.log m.bc
//
// Eviction: RAGreedy gets our eviction advisor. Per query it asks LLVM's
// default advisor (whose answer it returns: the allocation is plain llc's) and
// LLVM's ML advisor, which computes the features. The ML advisor talks to its
// model over LLVM's interactive channel; here that channel is a pair of FIFOs
// served by a thread of this process (RegAllocChannelTrace.h), which logs each
// observation with the default's choice as the column the ML advisor uses
// (index_to_evict) and replies that column. The ML advisor then picks the
// register at that column: every query checks that it is the default's
// register (else the compile fails). Priority: the same with the priority
// advisor (RegAllocPriorityTrace.cpp). After allocation, each function with
// observations gets LLVM's RegAllocScore as its reward, in each log.
//
// With -mlgo-regalloc-policy=random:P[:SEED] or tflite:DIR the plugin hosts
// that policy instead (RegAllocPolicyTrace.h): the channel thread answers with
// the policy's decision, RAGreedy uses LLVM's ML advisor as it is (as with
// -regalloc-enable-advisor=release), and the log holds what harvest-logs'
// interactive mode logs for the same policy, without its process round trip.
#include "EvictionCandidateIndex.h"
#include "RegAllocChannelTrace.h"
#include "RegAllocPolicyTrace.h"
#include "RegAllocPriorityTrace.h"
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
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/RegisterTargetPassConfigCallback.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace llvm;

namespace {

cl::OptionCategory Category("MLGO register-allocation plugin (libMLGORegAllocAdvisor.so)");

cl::opt<std::string> LogOption("mlgo-regalloc-log", cl::cat(Category),
                               cl::desc("Write the default eviction advisor's training log (development-mode "
                                        "format: LLVM's eviction features, index_to_evict, per-function reward) "
                                        "to this file. Environment: MLGO_REGALLOC_LOG. Without it and without "
                                        "-mlgo-regalloc-priority-log the plugin changes nothing."));

cl::opt<std::string> PriorityLogOption(
    "mlgo-regalloc-priority-log", cl::cat(Category),
    cl::desc("Write the default priority advisor's training log (development-mode format: LLVM's priority "
             "features li_size, stage, weight, the default's priority as the float column priority, "
             "per-function reward) to this file. Environment: MLGO_REGALLOC_PRIORITY_LOG. Independent of "
             "-mlgo-regalloc-log (both may be given, with different files)."));

cl::opt<std::string> PolicyOption(
    "mlgo-regalloc-policy", cl::cat(Category),
    cl::desc("Who decides the logged queries: default (record the default advisor; the allocation is plain "
             "llc's), random:P[:SEED] or tflite:DIR (decided in-process exactly as harvest-logs' interactive "
             "--policy: the allocation follows the policy). Needs -mlgo-regalloc-log or "
             "-mlgo-regalloc-priority-log. Environment: MLGO_REGALLOC_POLICY."));

cl::opt<std::string> ModuleOption("mlgo-regalloc-module", cl::cat(Category),
                                  cl::desc("The module's name, which seeds random:P[:SEED] per module as "
                                           "harvest-logs does (default: the LLVM module identifier). "
                                           "Environment: MLGO_REGALLOC_MODULE."));

[[noreturn]] void fatal(const Twine &message) {
  report_fatal_error("mlgo-regalloc: " + message, /*gen_crash_diag=*/false);
}

std::string optionOrEnvironment(const cl::opt<std::string> &option, const char *variable) {
  if (option.getNumOccurrences())
    return option;
  const char *value = std::getenv(variable);
  return value ? value : "";
}

// The eviction trace: the reply is the default's column in the ML advisor's
// candidate list (int64), which the channel's mask must allow.
class EvictionTrace final : public mlgo::ChannelTrace {
public:
  explicit EvictionTrace(std::string path) : ChannelTrace(std::move(path), "regalloc-evict-interactive-channel-base") {}

  void setPendingColumn(int64_t column) { PendingColumn = column; }

private:
  std::string checkHeader(const mlgo::TrainingLogReader &reader) override {
    Mask = reader.header().find("mask");
    if (!Mask || reader.header().Features[*Mask].elementCount() != mlgo::EvictCandidateColumn + 1)
      return "the eviction channel has no 33-column mask";
    return "";
  }

  std::string decision(const mlgo::TrainingLogReader &reader, std::string &error) override {
    int64_t column = PendingColumn;
    // A column the mask forbids is undefined behaviour in LLVM (it
    // crashes): reply an allowed one and fail the compile instead.
    const mlgo::TensorSpec &maskSpec = reader.header().Features[*Mask];
    StringRef mask = reader.feature(*Mask);
    if (maskSpec.elementAsInt(mask, static_cast<size_t>(column)) != 1) {
      error = "the default's column " + std::to_string(column) + " is masked in observation " +
              std::to_string(reader.observationIndex()) + " of " + reader.context();
      for (size_t i = 0; i < maskSpec.elementCount(); ++i)
        if (maskSpec.elementAsInt(mask, i) == 1) {
          column = static_cast<int64_t>(i);
          break;
        }
    }
    return std::string(reinterpret_cast<const char *>(&column), sizeof column);
  }

  std::optional<size_t> Mask;
  std::atomic<int64_t> PendingColumn{mlgo::EvictCandidateColumn};
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
  // still needs an advisor: the default one. `Recording` null: a hosted
  // policy answers the channel and RAGreedy takes the ML advisor's choices.
  RecordingProvider(LLVMContext &Ctx, mlgo::ChannelTrace &Trace, EvictionTrace *Recording, bool record)
      : RegAllocEvictionAdvisorProvider(AdvisorMode::Default, Ctx),
        ML(record ? createReleaseModeAdvisorProvider(Ctx) : nullptr), Trace(Trace), Recording(Recording) {}

  std::unique_ptr<RegAllocEvictionAdvisor> getAdvisor(const MachineFunction &MF, const RAGreedy &RA,
                                                      MachineBlockFrequencyInfo *MBFI,
                                                      MachineLoopInfo *Loops) override {
    if (!ML)
      return std::make_unique<DefaultEvictionAdvisor>(MF, RA);
    Trace.startServer();
    if (!Recording)
      return ML->getAdvisor(MF, RA, MBFI, Loops);
    return std::make_unique<RecordingEvictionAdvisor>(MF, RA, ML->getAdvisor(MF, RA, MBFI, Loops), *Recording);
  }

  // Closes the ML advisor's channel (its model runner) before the trace ends.
  void closeChannel() { ML.reset(); }

private:
  std::unique_ptr<RegAllocEvictionAdvisorProvider> ML;
  mlgo::ChannelTrace &Trace;
  EvictionTrace *Recording;
};

// Replaces the eviction advisor analysis RAGreedy asks for (same pass ID).
class RecordingEvictionAnalysis final : public RegAllocEvictionAdvisorAnalysisLegacy {
public:
  RecordingEvictionAnalysis(std::shared_ptr<mlgo::ChannelTrace> Trace, EvictionTrace *Recording)
      : RegAllocEvictionAdvisorAnalysisLegacy(AdvisorMode::Default), Trace(std::move(Trace)), Recording(Recording) {}

  ~RecordingEvictionAnalysis() override {
    if (Provider)
      static_cast<RecordingProvider &>(*Provider).closeChannel();
    Trace->finish();
  }

  bool doInitialization(Module &M) override {
    Trace->beginModule(M.getModuleIdentifier());
    bool ready = Trace->prepare(M.getContext());
    Provider = std::make_unique<RecordingProvider>(M.getContext(), *Trace, Recording, ready);
    return false;
  }

private:
  std::shared_ptr<mlgo::ChannelTrace> Trace;
  EvictionTrace *Recording;
};

// Runs right after the virtual register rewriter, where LLVM's own
// RegAllocScoring computes the development-mode reward.
class RegAllocRewardPass final : public MachineFunctionPass {
public:
  static char ID;
  explicit RegAllocRewardPass(std::vector<std::shared_ptr<mlgo::ChannelTrace>> Traces)
      : MachineFunctionPass(ID), Traces(std::move(Traces)) {}

  StringRef getPassName() const override { return "MLGO register allocation reward"; }

  void getAnalysisUsage(AnalysisUsage &AU) const override {
    AU.setPreservesAll();
    AU.addRequired<MachineBlockFrequencyInfoWrapperPass>();
    MachineFunctionPass::getAnalysisUsage(AU);
  }

  bool runOnMachineFunction(MachineFunction &MF) override {
    double score = mlgo::regAllocScore(MF, getAnalysis<MachineBlockFrequencyInfoWrapperPass>().getMBFI());
    for (size_t i = 0; i < Traces.size(); ++i) {
      Traces[i]->reward(static_cast<float>(score));
      std::string error = Traces[i]->serverError();
      // Once: the compile has failed, and every later function would repeat it.
      if (!error.empty() && !Reported[i]) {
        Reported[i] = true;
        MF.getFunction().getContext().emitError("mlgo-regalloc: " + error);
      }
    }
    return false;
  }

private:
  std::vector<std::shared_ptr<mlgo::ChannelTrace>> Traces;
  std::vector<bool> Reported = std::vector<bool>(Traces.size(), false);
};
char RegAllocRewardPass::ID = 0;

RegisterTargetPassConfigCallback Install([](TargetMachine &, legacy::PassManagerBase &PM, TargetPassConfig *Config) {
  std::string evictionLog = optionOrEnvironment(LogOption, "MLGO_REGALLOC_LOG");
  std::string priorityLog = optionOrEnvironment(PriorityLogOption, "MLGO_REGALLOC_PRIORITY_LOG");
  std::vector<std::shared_ptr<mlgo::ChannelTrace>> traces;
  // One file each: the logs and their channels (<log>.channel.*) would collide.
  if (!evictionLog.empty() && evictionLog == priorityLog)
    report_fatal_error("mlgo-regalloc: -mlgo-regalloc-log and -mlgo-regalloc-priority-log name the same file " +
                           Twine(evictionLog),
                       /*gen_crash_diag=*/false);
  std::string policy = optionOrEnvironment(PolicyOption, "MLGO_REGALLOC_POLICY");
  if (policy.empty())
    policy = "default";
  bool hosted = policy != "default";
  if (hosted && evictionLog.empty() && priorityLog.empty())
    fatal("-mlgo-regalloc-policy=" + policy + " needs -mlgo-regalloc-log or -mlgo-regalloc-priority-log");
  std::string module = optionOrEnvironment(ModuleOption, "MLGO_REGALLOC_MODULE");
  // One policy per trace: each problem has its own stream, as in harvest-logs.
  auto hostedTrace = [&](const std::string &log, mlgo::Problem problem, const char *flag) {
    auto made = mlgo::makeHostedPolicy(policy, problem);
    if (!made)
      fatal("-mlgo-regalloc-policy=" + policy + " (for " + flag + "): " + toString(made.takeError()));
    return mlgo::makePolicyTrace(log, problem, std::move(*made), module);
  };
  if (!evictionLog.empty()) {
    if (hosted) {
      std::shared_ptr<mlgo::ChannelTrace> trace =
          hostedTrace(evictionLog, mlgo::Problem::RegallocEvict, "-mlgo-regalloc-log");
      PM.add(new RecordingEvictionAnalysis(trace, nullptr));
      traces.push_back(std::move(trace));
    } else {
      auto trace = std::make_shared<EvictionTrace>(evictionLog);
      PM.add(new RecordingEvictionAnalysis(trace, trace.get()));
      traces.push_back(std::move(trace));
    }
  }
  if (!priorityLog.empty()) {
    bool policyDecides = hosted;
    std::shared_ptr<mlgo::ChannelTrace> trace =
        hosted ? hostedTrace(priorityLog, mlgo::Problem::RegallocPriority, "-mlgo-regalloc-priority-log")
               : mlgo::makePriorityTrace(priorityLog);
    PM.add(mlgo::createPriorityTraceAnalysis(trace, policyDecides));
    traces.push_back(std::move(trace));
  }
  if (!traces.empty())
    Config->insertPass(&VirtRegRewriterID, new RegAllocRewardPass(std::move(traces)));
});

} // namespace
