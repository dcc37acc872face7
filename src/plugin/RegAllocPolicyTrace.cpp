#include "RegAllocPolicyTrace.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace mlgo {
namespace {

const char *channelOption(Problem problem) {
  return problem == Problem::RegallocPriority ? "regalloc-priority-interactive-channel-base"
                                              : "regalloc-evict-interactive-channel-base";
}

class PolicyTrace final : public ChannelTrace {
public:
  PolicyTrace(std::string path, Problem problem, std::unique_ptr<Policy> policy, std::string module)
      : ChannelTrace(std::move(path), channelOption(problem)), Decisions(problem), ThePolicy(std::move(policy)),
        Module(std::move(module)) {}

  // Without -mlgo-regalloc-module, the LLVM module identifier names it.
  void beginModule(llvm::StringRef identifier) override {
    if (Module.empty())
      Module = identifier.str();
  }

private:
  // The compiler answers no deadline: the compile's own timeout bounds it.
  static Deadline forever() { return Deadline::max(); }

  std::string checkHeader(const TrainingLogReader &reader) override {
    const LogHeader &header = reader.header();
    if (header.Advice->Name != decisionName(Decisions))
      return std::string("the channel's header does not ask for ") + decisionName(Decisions) + " decisions";
    if (Decisions == Problem::RegallocEvict) {
      Mask = header.find("mask");
      if (!Mask || header.Features[*Mask].elementCount() != 33)
        return "the eviction channel has no 33-column mask";
    }
    // Once per module, as harvest-logs begins it before its compile. A policy
    // that cannot begin (a model that reads a feature LLVM does not compute)
    // fails the compile at its first decision; LLVM still gets every reply.
    if (!Begun) {
      Begun = true;
      if (llvm::Error e = ThePolicy->beginModule(Module))
        Unusable = llvm::toString(std::move(e));
    }
    if (Unusable.empty())
      if (llvm::Error e = ThePolicy->beginStream(header, forever()))
        Unusable = llvm::toString(std::move(e));
    return "";
  }

  std::string decision(const TrainingLogReader &reader, std::string &error) override {
    const TensorSpec &advice = *reader.header().Advice;
    Query query{reader, advice, std::nullopt, Mask};
    std::string reply;
    if (!Unusable.empty()) {
      error = Unusable;
    } else if (auto decided = ThePolicy->decide(query, forever()); !decided) {
      error = llvm::toString(decided.takeError());
    } else if (decided->size() != advice.byteSize()) {
      error = "the policy's reply has " + std::to_string(decided->size()) + " bytes, not " +
              std::to_string(advice.byteSize());
    } else {
      reply = std::move(*decided);
    }
    std::vector<int64_t> valid = validEvictionColumns(query);
    if (error.empty() && Mask) {
      // As harvest-logs' interactive host: a column the mask forbids is never
      // sent (LLVM crashes on one); the compile fails instead.
      int64_t column = advice.elementAsInt(reply, 0);
      if (std::find(valid.begin(), valid.end(), column) == valid.end()) {
        std::string allowed;
        for (int64_t v : valid)
          allowed += (allowed.empty() ? "" : ",") + std::to_string(v);
        error = "the policy chose eviction column " + std::to_string(column) + " for observation " +
                std::to_string(reader.observationIndex()) + " of " + reader.context() +
                ", which the mask forbids (allowed: " + allowed + ")";
      }
    }
    if (error.empty())
      return reply;
    // An acceptable reply so that LLVM goes on (the reward pass fails the compile).
    reply.assign(advice.byteSize(), '\0');
    if (Mask && !valid.empty() && reply.size() == sizeof(int64_t))
      std::memcpy(reply.data(), &valid.front(), sizeof(int64_t));
    Failed = true;
    return reply;
  }

  std::vector<TensorSpec> loggedOutputs() const override { return ThePolicy->loggedOutputs(); }
  llvm::StringRef loggedOutputBytes() const override {
    return Failed ? llvm::StringRef() : ThePolicy->loggedOutputBytes();
  }

  Problem Decisions;
  std::unique_ptr<Policy> ThePolicy;
  std::string Module;
  std::optional<size_t> Mask;
  std::string Unusable;
  bool Begun = false;
  bool Failed = false;
};

} // namespace

llvm::Expected<std::unique_ptr<Policy>> makeHostedPolicy(llvm::StringRef spec, Problem problem) {
  auto parsed = parsePolicy(spec);
  if (!parsed)
    return parsed.takeError();
  switch (parsed->How) {
  case PolicySpec::Kind::Random:
    return makeRandomPolicy(parsed->Probability, parsed->Seed);
  case PolicySpec::Kind::TFLite:
    return makeTFLitePolicy(parsed->ModelDir, problem);
  default:
    return llvm::createStringError("the plugin hosts default, random:P[:SEED] and tflite:DIR; exec:CMD (and other "
                                   "policies) answer on harvest-logs' interactive channel (--mode=interactive)");
  }
}

std::shared_ptr<ChannelTrace> makePolicyTrace(std::string path, Problem problem, std::unique_ptr<Policy> policy,
                                              std::string module) {
  return std::make_shared<PolicyTrace>(std::move(path), problem, std::move(policy), std::move(module));
}

} // namespace mlgo
