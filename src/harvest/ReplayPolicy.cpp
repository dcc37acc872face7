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
  ReplayPolicy(std::string path, TrajectorySet set) : Path(std::move(path)), Set(std::move(set)) {}

  llvm::Error beginModule(llvm::StringRef module) override {
    Followed = nullptr;
    auto followed = trajectoryOf(Set, Path, module);
    if (!followed)
      return followed.takeError();
    Module = module.str();
    Followed = *followed;
    Next = 0;
    Then.reset();
    if (!Followed->Then.empty()) {
      auto then = thenPolicy(Followed->Then);
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
    size_t step = Next++;
    if (step < Followed->Recorded.size()) {
      int64_t decision = Followed->Recorded[step];
      return std::string(reinterpret_cast<const char *>(&decision), sizeof(decision));
    }
    if (own)
      return std::move(*own);
    return llvm::createStringError("%s", replayLengthMismatch(Module, Followed->Recorded.size(), step + 1).c_str());
  }

  llvm::Expected<std::string> pluginPolicyForModule(const std::string &work) override {
    // Only this module's line: the compile reads its work directory, and a
    // corpus-wide file would be parsed once per compile.
    llvm::SmallString<256> file(joinPath(work, "replay.jsonl"));
    llvm::sys::fs::make_absolute(file); // the compiler runs in the work directory
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    if (!ec) {
      os << trajectoryLine(Module, Followed->Recorded, Followed->Then);
      os.close();
      ec = os.error();
    }
    if (ec)
      return llvm::createStringError(ec, "replay: cannot write %s: %s", file.c_str(), ec.message().c_str());
    return "replay:" + file.str().str();
  }

  llvm::Error endModule(size_t decisions) override {
    if (std::optional<std::string> why = replayMismatch(Module, *Followed, decisions))
      return llvm::createStringError("%s", why->c_str());
    return llvm::Error::success();
  }

private:
  // The policies a trajectory may follow after its recorded prefix.
  static llvm::Expected<std::unique_ptr<Policy>> thenPolicy(const std::string &text) {
    auto spec = parsePolicy(text);
    if (!spec)
      return spec.takeError();
    if (spec->How == PolicySpec::Kind::Default)
      return makeDefaultPolicy();
    if (spec->How == PolicySpec::Kind::Random)
      return makeRandomPolicy(spec->Probability, spec->Seed);
    return llvm::createStringError("replay: a trajectory can only continue with default or random:P:SEED, not %s",
                                   text.c_str());
  }

  std::string Path, Module;
  TrajectorySet Set;
  const Trajectory *Followed = nullptr;
  std::unique_ptr<Policy> Then;
  size_t Next = 0;
};

} // namespace

llvm::Expected<std::unique_ptr<Policy>> makeReplayPolicy(const std::string &path) {
  auto set = readTrajectories(path);
  if (!set)
    return set.takeError();
  return std::make_unique<ReplayPolicy>(path, std::move(*set));
}

} // namespace mlgo
