// A regalloc policy hosted by the plugin (-mlgo-regalloc-policy=random:P[:SEED]
// or tflite:DIR): LLVM's ML advisor computes the features and asks over its
// interactive channel, as in harvest-logs' interactive mode, but the channel is
// served by a thread of the compiler, which decides with harvest-logs' own
// Policy (src/policy/RandomPolicy.cpp, TFLitePolicy.cpp), so both modes take
// the same decisions and write the same observations. RAGreedy then uses the
// ML advisor's answer.
#pragma once

#include "RegAllocChannelTrace.h"

#include "mlgo/log/Problem.h"
#include "mlgo/policy/Policy.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mlgo {

/// The policy for SPEC deciding `problem`'s queries, or an Error naming what
/// the plugin hosts (default needs no policy: it is the recording trace).
llvm::Expected<std::unique_ptr<Policy>> makeHostedPolicy(llvm::StringRef spec, Problem problem);

/// A trace whose replies are `policy`'s decisions; `module` seeds it as
/// harvest-logs seeds it (the corpus name of the module).
std::shared_ptr<ChannelTrace> makePolicyTrace(std::string path, Problem problem, std::unique_ptr<Policy> policy,
                                              std::string module);

} // namespace mlgo
