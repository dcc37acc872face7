// --policy=replay:FILE: answer every inlining query as the module's recorded
// trajectory did. Interactive mode asks this host; plugin mode hands the
// module's trajectory to the plugin's replay policy (ReplayInProcessPolicy.cpp).
#include "mlgo/harvest/Policy.h"
#include "mlgo/harvest/Trajectory.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace mlgo {
namespace {

class ReplayPolicy : public Policy {
public:
  ReplayPolicy(std::string path, TrajectorySet set, std::string thenModel)
      : Path(std::move(path)), Set(std::move(set)), ThenModel(std::move(thenModel)) {}

  llvm::Error beginModule(llvm::StringRef module) override {
    Then.reset();
    if (llvm::Error e = Cursor.begin(Set, Path, module))
      return e;
    if (!Cursor.followed().Then.empty()) {
      auto then = thenPolicy(Cursor.followed().Then, ThenModel);
      if (!then)
        return then.takeError();
      Then = std::move(*then);
      if (llvm::Error e = Then->beginModule(module))
        return e;
    }
    return llvm::Error::success();
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
  // The policies a trajectory may follow after its recorded prefix.
  // A model only when it is the one the run was given (the file is data:
  // it does not choose what we read).
  static llvm::Expected<std::unique_ptr<Policy>> thenPolicy(const std::string &text, const std::string &model) {
    auto spec = parsePolicy(text);
    if (!spec)
      return spec.takeError();
    if (spec->How == PolicySpec::Kind::Default)
      return makeDefaultPolicy();
    if (spec->How == PolicySpec::Kind::Random)
      return makeRandomPolicy(spec->Probability, spec->Seed);
    if (spec->How == PolicySpec::Kind::TFLite) {
      if (model.empty() || spec->ModelDir != model)
        return llvm::createStringError("replay: `then` names %s, a model this run was not given", text.c_str());
      return makeTFLitePolicy(spec->ModelDir, Problem::Inliner);
    }
    return llvm::createStringError(
        "replay: a trajectory can only continue with default, random:P:SEED or tflite:DIR, not %s", text.c_str());
  }

  std::string Path;
  TrajectorySet Set;
  std::string ThenModel; // the tflite: directory a `then` may name ("" : none)
  ReplayCursor Cursor;
  std::unique_ptr<Policy> Then;
};

} // namespace

llvm::Expected<std::unique_ptr<Policy>> makeReplayPolicy(const std::string &path, const std::string &thenModel) {
  auto set = readTrajectories(path);
  if (!set)
    return set.takeError();
  return std::make_unique<ReplayPolicy>(path, std::move(*set), thenModel);
}

} // namespace mlgo
