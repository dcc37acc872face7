// --policy=replay:FILE: answer every inlining query as the module's recorded
// trajectory did. Interactive mode asks this host; plugin mode hands the
// module's trajectory to the plugin's replay policy (ReplayInProcessPolicy.cpp).
#include "mlgo/policy/Policy.h"
#include "mlgo/policy/Trajectory.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlgo {
namespace {

class ReplayPolicy : public Policy {
public:
  ReplayPolicy(std::string path, TrajectorySet set, ReplayThen allowed)
      : Path(std::move(path)), Set(std::move(set)), Allowed(std::move(allowed)) {}

  llvm::Error beginModule(llvm::StringRef module) override {
    Then = nullptr;
    if (llvm::Error e = Cursor.begin(Set, Path, module))
      return e;
    if (!Cursor.followed().Then.empty()) {
      // Made once per worker and spec, as the run's own policy is (an exec
      // policy's process serves module after module).
      std::unique_ptr<Policy> &then = ThenPolicies[Cursor.followed().Then];
      if (!then) {
        auto made = thenPolicy(Cursor.followed().Then);
        if (!made)
          return made.takeError();
        then = std::move(*made);
      }
      Then = then.get();
      if (llvm::Error e = Then->beginModule(module))
        return e;
    }
    return llvm::Error::success();
  }

  llvm::Error beginStream(const LogHeader &header, Deadline deadline) override {
    return Then ? Then->beginStream(header, deadline) : llvm::Error::success();
  }
  llvm::Error context(llvm::StringRef name, Deadline deadline) override {
    return Then ? Then->context(name, deadline) : llvm::Error::success();
  }
  void abandonModule() override {
    if (Then)
      Then->abandonModule();
  }

  llvm::Expected<std::string> decide(const Query &query, Deadline deadline) override {
    if (query.MaskFeature || query.Advice.Type != ElementType::Int64)
      return llvm::createStringError("replay: only inlining decisions can be replayed");
    // The `then` policy sees every query, so a random stream stays in step
    // with the trajectory the recorded prefix came from.
    std::optional<std::string> own;
    if (Then) {
      auto decided = Then->decide(query, deadline);
      if (!decided)
        return decided.takeError();
      own = std::move(*decided);
    }
    auto recorded = Cursor.next();
    if (!recorded)
      return recorded.takeError();
    if (!*recorded)
      return std::move(*own);
    int64_t decision = **recorded;
    return std::string(reinterpret_cast<const char *>(&decision), sizeof(decision));
  }

  llvm::Expected<std::string> pluginPolicyForModule(const std::string &work) override {
    // Only this module's line: the compile reads its work directory, and a
    // corpus-wide file would be parsed once per compile.
    llvm::SmallString<256> file(joinPath(work, "replay.jsonl"));
    llvm::sys::fs::make_absolute(file); // the compiler runs in the work directory
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    if (!ec) {
      os << trajectoryLine(Cursor.module(), Cursor.followed().Recorded, Cursor.followed().Then);
      os.close();
      ec = os.error();
    }
    if (ec)
      return llvm::createStringError(ec, "replay: cannot write %s: %s", file.c_str(), ec.message().c_str());
    return "replay:" + file.str().str();
  }

  // What the `then` policy logs (a model's logits) is logged through the
  // recorded prefix too: it is asked at every step.
  std::vector<TensorSpec> loggedOutputs() const override {
    return Then ? Then->loggedOutputs() : std::vector<TensorSpec>();
  }
  llvm::StringRef loggedOutputBytes() const override { return Then ? Then->loggedOutputBytes() : llvm::StringRef(); }

  llvm::Error endModule(size_t decisions) override {
    if (std::optional<std::string> why = replayMismatch(Cursor.module(), Cursor.followed(), decisions))
      return llvm::createStringError("%s", why->c_str());
    return llvm::Error::success();
  }

private:
  // The policies a trajectory may follow after its recorded prefix. A model
  // or a command only when it is the one the run was given (the file is
  // data: it does not choose what we read or run).
  llvm::Expected<std::unique_ptr<Policy>> thenPolicy(const std::string &text) const {
    auto spec = parsePolicy(text);
    if (!spec)
      return spec.takeError();
    if (spec->How == PolicySpec::Kind::Default)
      return makeDefaultPolicy();
    if (spec->How == PolicySpec::Kind::Random)
      return makeRandomPolicy(spec->Probability, spec->Seed);
    if (spec->How == PolicySpec::Kind::TFLite) {
      if (Allowed.Model.empty() || spec->ModelDir != Allowed.Model)
        return llvm::createStringError("replay: `then` names %s, a model this run was not given", text.c_str());
      return makeTFLitePolicy(spec->ModelDir, Problem::Inliner);
    }
    if (spec->How == PolicySpec::Kind::Exec) {
      if (Allowed.Exec.Command.empty() || spec->Command != Allowed.Exec.Command)
        return llvm::createStringError("replay: `then` names %s, a command this run was not given", text.c_str());
      return makeExecPolicy(Allowed.Exec.Command, Allowed.StderrPath, Allowed.Exec.ExecCertainty);
    }
    return llvm::createStringError(
        "replay: a trajectory can only continue with default, random:P:SEED, tflite:DIR or exec:CMD, not %s",
        text.c_str());
  }

  std::string Path;
  TrajectorySet Set;
  ReplayThen Allowed;
  ReplayCursor Cursor;
  std::map<std::string, std::unique_ptr<Policy>> ThenPolicies;
  Policy *Then = nullptr; // this module's, one of ThenPolicies
};

} // namespace

llvm::Expected<std::unique_ptr<Policy>> makeReplayPolicy(const std::string &path, const ReplayThen &then) {
  auto set = readTrajectories(path);
  if (!set)
    return set.takeError();
  return std::make_unique<ReplayPolicy>(path, std::move(*set), then);
}

} // namespace mlgo
