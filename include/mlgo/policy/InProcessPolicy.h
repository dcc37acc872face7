// Inlining policies that run inside the compiler, in the MLGO inliner plugin
// (libMLGOInlineAdvisor.so). The plugin computes each decision's features
// with LLVM's own MLInlineAdvisor, asks the policy named by
// -mlgo-inliner-policy=SPEC, and logs the features, the policy's extra
// outputs, inlining_default and inlining_decision.
//
// Adding a policy takes one new source file (tflite:DIR, the model
// evaluator, is one: src/plugin/TFLiteInProcessPolicy.cpp):
//
//   class MyPolicy : public mlgo::InProcessPolicy { ... };
//   static mlgo::InProcessPolicyRegistration Register(
//       "mine", "mine:MODEL_DIR: decides with the model in MODEL_DIR",
//       [](llvm::StringRef argument) -> llvm::Expected<std::unique_ptr<mlgo::InProcessPolicy>> {
//         return std::make_unique<MyPolicy>(argument);
//       });
//
// and its name in MLGO_PLUGIN_POLICY_SOURCES (src/CMakeLists.txt), which
// compiles it into the plugin. `--policy=mine:DIR` then runs in plugin mode.
#pragma once

#include "mlgo/log/TensorSpec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// Which call site a decision is about, named as the decision sites file
/// names it: the k-th decision about a call from Caller to Callee.
struct InProcessCallSite {
  llvm::StringRef Caller, Callee;
  uint64_t Site = 0;
};

/// One inlining decision, as the advisor computed it.
struct InProcessQuery {
  /// The compiler's features in logging order (38 int64 [1] scalars for
  /// LLVM 22, more with IR2Vec embeddings) and their raw native-endian bytes.
  llvm::ArrayRef<TensorSpec> Specs;
  llvm::ArrayRef<llvm::StringRef> Features;
  /// The default heuristic's decision for this call site.
  bool DefaultDecision = false;
  /// The default heuristic's threshold minus its inline cost at this site
  /// (positive: inline, before deferral), as the sites file's cost_margin;
  /// nullopt when the cost is not variable (always or never inline) or when
  /// no policy asked for the default (usesDefaultDecision()).
  std::optional<int64_t> CostMargin;
  /// The call site, when the policy asked for it (usesCallSites()).
  const InProcessCallSite *Site = nullptr;

  /// The feature called `name`, if the compiler computes it.
  std::optional<size_t> find(llvm::StringRef name) const;
  /// Element 0 of feature `i` as an int64 (what the inliner's scalars are).
  int64_t scalar(size_t i) const { return Specs[i].elementAsInt(Features[i], 0); }
};

class InProcessPolicy {
public:
  virtual ~InProcessPolicy() = default;

  /// Once per compiled module, before its first decision, with the features
  /// the compiler computes. An Error fails the compile with its message
  /// (e.g. a model that needs a feature this compiler does not compute).
  /// `module` names the module (the corpus name under harvest-logs).
  virtual llvm::Error beginModule(llvm::StringRef module, llvm::ArrayRef<TensorSpec> features) {
    return llvm::Error::success();
  }

  /// Extra outputs logged with every decision, after the features and before
  /// inlining_default, as development mode logs a model's extra outputs.
  /// Fixed for the policy's lifetime; asked once, after beginModule.
  virtual std::vector<TensorSpec> extraOutputs() const { return {}; }

  /// Whether decide() reads query.DefaultDecision; asked once, after
  /// beginModule. When no policy reads it and nothing logs it, the plugin
  /// skips the default heuristic's cost analysis of every call site (a
  /// deployed model pays only for its own features).
  virtual bool usesDefaultDecision() const { return true; }

  /// Whether decide() reads query.Site; asked once, after beginModule.
  virtual bool usesCallSites() const { return false; }

  /// After the module's inliner pass ended (a policy may report what it
  /// expected and did not see).
  virtual void endModule() {}

  /// The decision (true: inline). `extra[i]` has extraOutputs()[i].byteSize()
  /// bytes, zeroed, for the policy to fill. An Error fails the compile.
  virtual llvm::Expected<bool> decide(const InProcessQuery &query, llvm::MutableArrayRef<std::string> extra) = 0;
};

/// Builds a policy from the argument after "NAME:" ("" when the spec is just NAME).
using InProcessPolicyFactory = std::function<llvm::Expected<std::unique_ptr<InProcessPolicy>>(llvm::StringRef)>;

/// Registers NAME; `usage` is shown when a spec names no known policy.
void registerInProcessPolicy(std::string name, std::string usage, InProcessPolicyFactory factory);

/// Registers at static-initialization time (one per policy source file).
struct InProcessPolicyRegistration {
  InProcessPolicyRegistration(std::string name, std::string usage, InProcessPolicyFactory factory) {
    registerInProcessPolicy(std::move(name), std::move(usage), std::move(factory));
  }
};

/// The policy for SPEC ("NAME" or "NAME:ARGUMENT"); an unknown NAME is an
/// Error listing the known ones.
llvm::Expected<std::unique_ptr<InProcessPolicy>> makeInProcessPolicy(llvm::StringRef spec);

/// "NAME:ARG" for every registered policy, one per line (for messages).
std::string inProcessPolicyUsage();

} // namespace mlgo
