#include "RegAllocPriorityTrace.h"

#include "llvm/CodeGen/LiveInterval.h"
#include "llvm/CodeGen/MachineFunction.h"
#include "llvm/CodeGen/RegAllocPriorityAdvisor.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <atomic>

using namespace llvm;

namespace mlgo {
namespace {

// The reply is a float: LLVM's ML priority advisor declares its `priority`
// advice so, and development mode logs static_cast<float>(the default's
// unsigned priority) in that column. A float has 24 significant bits, so the
// column rounds priorities above 2^24 (every range but RS_Split's has bit 31
// set); the allocation itself uses the exact default priority.
class PriorityTrace final : public ChannelTrace {
public:
  explicit PriorityTrace(std::string path)
      : ChannelTrace(std::move(path), "regalloc-priority-interactive-channel-base") {}

  void setPendingPriority(float priority) { Pending = priority; }

private:
  std::string checkHeader(const TrainingLogReader &reader) override {
    const TensorSpec &advice = *reader.header().Advice;
    if (advice.Name != "priority" || advice.Type != ElementType::Float || advice.elementCount() != 1)
      return "the priority channel's advice is not one float named priority";
    return "";
  }

  std::string decision(const TrainingLogReader &, std::string &) override {
    float priority = Pending;
    return std::string(reinterpret_cast<const char *>(&priority), sizeof priority);
  }

  std::atomic<float> Pending{0};
};

class RecordingPriorityAdvisor final : public RegAllocPriorityAdvisor {
public:
  RecordingPriorityAdvisor(const MachineFunction &MF, const RAGreedy &RA, SlotIndexes *Indexes,
                           std::unique_ptr<RegAllocPriorityAdvisor> ML, PriorityTrace &Trace)
      : RegAllocPriorityAdvisor(MF, RA, Indexes), MF(MF), Default(MF, RA, Indexes), ML(std::move(ML)), Trace(Trace) {}

private:
  unsigned getPriority(const LiveInterval &LI) const override {
    // DefaultPriorityAdvisor::getPriority is private; the base's is public.
    unsigned chosen = static_cast<const RegAllocPriorityAdvisor &>(Default).getPriority(LI);
    float column = static_cast<float>(chosen);
    Trace.setPendingPriority(column);
    uint64_t before = Trace.answered();
    // LLVM's ML advisor computes the features, sends them, and returns
    // static_cast<unsigned>(our reply): both must have happened.
    unsigned mlPriority = ML->getPriority(LI);
    bool asked = Trace.answered() == before + 1;
    // A float of 2^32 (a priority rounded up) has no unsigned value to compare.
    bool comparable = column < 4294967296.0f;
    if (!asked || (comparable && mlPriority != static_cast<unsigned>(column)))
      MF.getFunction().getContext().emitError(
          "mlgo-regalloc: in " + MF.getName() + ", the default priority is " + std::to_string(chosen) +
          (asked ? " but LLVM's ML priority advisor read the reply as " + std::to_string(mlPriority)
                 : " but LLVM's ML priority advisor did not ask its model"));
    return chosen;
  }

  const MachineFunction &MF;
  DefaultPriorityAdvisor Default;
  std::unique_ptr<RegAllocPriorityAdvisor> ML;
  PriorityTrace &Trace;
};

class RecordingPriorityProvider final : public RegAllocPriorityAdvisorProvider {
public:
  // Without a channel (`record` false, the error already reported) RAGreedy
  // still needs an advisor: the default one. `Recording` null: a hosted
  // policy answers the channel and RAGreedy takes the ML advisor's priorities.
  RecordingPriorityProvider(ChannelTrace &Trace, PriorityTrace *Recording, bool record)
      : RegAllocPriorityAdvisorProvider(AdvisorMode::Default),
        ML(record ? createReleaseModePriorityAdvisorProvider() : nullptr), Trace(Trace), Recording(Recording) {}

  std::unique_ptr<RegAllocPriorityAdvisor> getAdvisor(const MachineFunction &MF, const RAGreedy &RA,
                                                      SlotIndexes &SI) override {
    if (!ML)
      return std::make_unique<DefaultPriorityAdvisor>(MF, RA, &SI);
    Trace.startServer();
    if (!Recording)
      return ML->getAdvisor(MF, RA, SI);
    return std::make_unique<RecordingPriorityAdvisor>(MF, RA, &SI, ML->getAdvisor(MF, RA, SI), *Recording);
  }

  // Closes the ML advisor's channel (its model runner) before the trace ends.
  void closeChannel() { ML.reset(); }

private:
  std::unique_ptr<RegAllocPriorityAdvisorProvider> ML;
  ChannelTrace &Trace;
  PriorityTrace *Recording;
};

// Replaces the priority advisor analysis RAGreedy asks for (same pass ID).
class RecordingPriorityAnalysis final : public RegAllocPriorityAdvisorAnalysisLegacy {
public:
  RecordingPriorityAnalysis(std::shared_ptr<ChannelTrace> Trace, PriorityTrace *Recording)
      : RegAllocPriorityAdvisorAnalysisLegacy(AdvisorMode::Default), Trace(std::move(Trace)), Recording(Recording) {}

  ~RecordingPriorityAnalysis() override {
    if (Provider)
      static_cast<RecordingPriorityProvider &>(*Provider).closeChannel();
    Trace->finish();
  }

  bool doInitialization(Module &M) override {
    Trace->beginModule(M.getModuleIdentifier());
    bool ready = Trace->prepare(M.getContext());
    Provider = std::make_unique<RecordingPriorityProvider>(*Trace, Recording, ready);
    return false;
  }

private:
  std::shared_ptr<ChannelTrace> Trace;
  PriorityTrace *Recording;
};

} // namespace

std::shared_ptr<ChannelTrace> makePriorityTrace(std::string path) {
  return std::make_shared<PriorityTrace>(std::move(path));
}

ImmutablePass *createPriorityTraceAnalysis(std::shared_ptr<ChannelTrace> trace, bool policyDecides) {
  auto *recording = policyDecides ? nullptr : static_cast<PriorityTrace *>(trace.get());
  return new RecordingPriorityAnalysis(std::move(trace), recording);
}

} // namespace mlgo
