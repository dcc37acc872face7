// The default priority advisor's trace (-mlgo-regalloc-priority-log): LLVM's
// ML priority advisor computes the features (li_size, stage, weight) and asks
// over its interactive channel; the reply, and the logged `priority` column,
// is the default's priority as a float, as LLVM's development mode logs it.
#pragma once

#include "RegAllocChannelTrace.h"

#include <memory>
#include <string>

namespace llvm {
class ImmutablePass;
}

namespace mlgo {

std::shared_ptr<ChannelTrace> makePriorityTrace(std::string path);

/// The analysis RAGreedy takes its priority advisor from (the same pass ID as
/// LLVM's), recording into `trace`: one made by makePriorityTrace, or, with
/// `policyDecides`, a hosted policy's (RegAllocPolicyTrace.h), whose answers
/// RAGreedy then takes from LLVM's ML priority advisor.
llvm::ImmutablePass *createPriorityTraceAnalysis(std::shared_ptr<ChannelTrace> trace, bool policyDecides = false);

} // namespace mlgo
