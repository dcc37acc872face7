// replay:FILE inside the compiler: decide as the module's recorded trajectory
// did (Trajectory.h), then, when the trajectory names one, as its `then`
// policy. harvest-logs hands each compile a file holding only its module's
// line; run by hand, FILE may hold the whole corpus.
#include "mlgo/policy/InProcessPolicy.h"
#include "mlgo/policy/Trajectory.h"

namespace mlgo {
namespace {

class ReplayDecisions : public InProcessPolicy {
public:
  ReplayDecisions(std::string path, TrajectorySet set) : Path(std::move(path)), Set(std::move(set)) {}

  llvm::Error beginModule(llvm::StringRef module, llvm::ArrayRef<TensorSpec> features) override {
    Then.reset();
    if (llvm::Error e = Cursor.begin(Set, Path, module))
      return e;
    if (!Cursor.followed().Then.empty()) {
      auto then = makeInProcessPolicy(Cursor.followed().Then);
      if (!then)
        return then.takeError();
      Then = std::move(*then);
      if (llvm::Error e = Then->beginModule(module, features))
        return e;
    }
    return llvm::Error::success();
  }

  // What the `then` policy logs (a model's logits), through the recorded
  // prefix too: it is asked at every step.
  std::vector<TensorSpec> extraOutputs() const override {
    return Then ? Then->extraOutputs() : std::vector<TensorSpec>();
  }
  bool usesDefaultDecision() const override { return Then && Then->usesDefaultDecision(); }

  llvm::Expected<bool> decide(const InProcessQuery &query, llvm::MutableArrayRef<std::string> extra) override {
    // The `then` policy sees every query, so a random stream stays in step
    // with the trajectory the recorded prefix came from.
    std::optional<bool> own;
    if (Then) {
      auto decided = Then->decide(query, extra);
      if (!decided)
        return decided.takeError();
      own = *decided;
    }
    auto recorded = Cursor.next();
    if (!recorded)
      return recorded.takeError();
    return *recorded ? **recorded : *own;
  }

private:
  std::string Path;
  TrajectorySet Set;
  ReplayCursor Cursor;
  std::unique_ptr<InProcessPolicy> Then;
};

InProcessPolicyRegistration Replay("replay",
                                   "replay:FILE: the decisions recorded for the module in FILE (JSON Lines), then "
                                   "its `then` policy if it names one",
                                   [](llvm::StringRef argument) -> llvm::Expected<std::unique_ptr<InProcessPolicy>> {
                                     if (argument.empty())
                                       return llvm::createStringError("replay:FILE needs a trajectories file");
                                     auto set = readTrajectories(argument);
                                     if (!set)
                                       return set.takeError();
                                     return std::make_unique<ReplayDecisions>(argument.str(), std::move(*set));
                                   });

} // namespace
} // namespace mlgo
