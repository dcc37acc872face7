#include "mlgo/evaluate/InlinerEpisode.h"
#include "mlgo/compile/CompileConfinement.h"

#include "mlgo/compile/InteractiveSession.h"
#include "mlgo/evaluate/NativeSize.h"
#include "mlgo/policy/Policy.h"
#include "mlgo/support/OutputFile.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"

#include <cstring>

namespace mlgo {

// The policy the compile thread asks: it hands each query to the caller and
// waits for the action, the close, or the compile's deadline.
class InlinerEpisode::Host : public Policy {
public:
  explicit Host(InlinerEpisode &episode) : Episode(episode) {}

  llvm::Expected<std::string> decide(const Query &query, Deadline deadline) override {
    EpisodeQuery asked;
    const LogHeader &header = query.Observation.header();
    for (size_t i = 0; i < header.Features.size(); ++i) {
      asked.Specs.push_back(header.Features[i]);
      asked.Tensors.push_back(query.Observation.feature(i).str());
    }
    asked.Index = query.Observation.observationIndex();
    std::unique_lock<std::mutex> lock(Episode.Mutex);
    Episode.Pending = std::move(asked);
    Episode.Answer.reset();
    Episode.Changed.notify_all();
    bool answered = Episode.Changed.wait_until(lock, deadline, [&] { return Episode.Answer || Episode.Closing; });
    if (Episode.Closing)
      return llvm::createStringError("the episode was closed");
    if (!answered)
      return llvm::createStringError("no action came before the compile's deadline");
    std::string reply(8, '\0');
    int64_t decision = *Episode.Answer;
    std::memcpy(reply.data(), &decision, 8);
    Episode.Answer.reset();
    return reply;
  }

private:
  InlinerEpisode &Episode;
};

namespace {

// Confined as harvest-logs' compiles are: the tool's installation, the
// system's libraries, the module's bitcode (docs/security.md).
CompileJob job(const std::vector<std::string> &argv, const EpisodeSettings &settings, const std::string &stderrPath,
               const std::string &bitcode) {
  auto until = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<int64_t>(settings.TimeoutSeconds * 1000));
  ReadExecRules rules = toolReadExecRules(argv[0]);
  rules.Readable.push_back(bitcode);
  return CompileJob{argv, stderrPath, until, settings.TimeoutSeconds, settings.WorkDir, {}, std::move(rules)};
}

void fromOutcome(const CompileOutcome &outcome, EpisodeResult &result) {
  result.Status = outcome.Result == CompileOutcome::Status::Ok        ? "ok"
                  : outcome.Result == CompileOutcome::Status::Timeout ? "timeout"
                                                                      : "failed";
  result.Reason = outcome.Reason;
  result.Detail = outcome.Detail;
  result.StderrTail = outcome.StderrTail;
}

} // namespace

llvm::Expected<std::unique_ptr<InlinerEpisode>> InlinerEpisode::start(const std::string &bitcode,
                                                                      EpisodeSettings settings) {
  if (settings.Compiler.Kind != CompilerKind::Opt)
    return llvm::createStringError("an inliner episode runs opt (then llc)");
  if (std::error_code ec = llvm::sys::fs::create_directories(settings.WorkDir))
    return llvm::createStringError(ec, "cannot create %s: %s", settings.WorkDir.c_str(), ec.message().c_str());
  std::unique_ptr<InlinerEpisode> episode(new InlinerEpisode(std::move(settings)));
  episode->Thread = std::thread([raw = episode.get(), bitcode] { raw->run(bitcode); });
  return episode;
}

void InlinerEpisode::run(const std::string &bitcode) {
  AdvisorSetup advisor;
  advisor.Mode = AdvisorMode::Interactive;
  advisor.ChannelBase = joinPath(Settings.WorkDir, "channel");
  ModuleCommands commands =
      moduleCommands(Settings.Compiler, Problem::Inliner, ModuleInputs{bitcode, {}}, advisor, Settings.WorkDir);
  Host host(*this);
  EpisodeResult result;
  {
    OutputFile log(joinPath(Settings.WorkDir, "episode.log"));
    CompileOutcome outcome =
        runInteractive(job(commands.Compile, Settings, joinPath(Settings.WorkDir, "opt.stderr"), bitcode),
                       advisor.ChannelBase, Problem::Inliner, host, log);
    llvm::consumeError(log.finish());
    fromOutcome(outcome, result);
    result.Decisions = outcome.Decisions;
  }
  if (result.Status == "ok" && commands.Codegen) {
    CompileOutcome codegen =
        runCompile(job(*commands.Codegen, Settings, joinPath(Settings.WorkDir, "llc.stderr"), bitcode));
    if (codegen.Result != CompileOutcome::Status::Ok) {
      size_t decisions = result.Decisions;
      fromOutcome(codegen, result);
      result.Decisions = decisions;
    } else if (auto size = berkeleyTextSize(commands.Native)) {
      result.NativeSize = *size;
    } else {
      result.Status = "failed";
      result.Reason = "no_native_object";
      result.Detail = llvm::toString(size.takeError());
    }
  }
  std::lock_guard<std::mutex> lock(Mutex);
  Result = std::move(result);
  if (Closing)
    Result.Status = "closed";
  Over = true;
  Pending.reset();
  Changed.notify_all();
}

std::optional<EpisodeQuery> InlinerEpisode::next() {
  std::unique_lock<std::mutex> lock(Mutex);
  Changed.wait(lock, [&] { return (Pending && !Answer) || Over; });
  if (Over)
    return std::nullopt;
  return *Pending;
}

llvm::Error InlinerEpisode::answer(int64_t decision) {
  std::lock_guard<std::mutex> lock(Mutex);
  if (Over)
    return llvm::createStringError("the episode is over");
  if (!Pending || Answer)
    return llvm::createStringError("no query is waiting for an answer");
  Answer = decision;
  Pending.reset();
  Changed.notify_all();
  return llvm::Error::success();
}

void InlinerEpisode::close() {
  {
    std::lock_guard<std::mutex> lock(Mutex);
    if (Closed)
      return;
    Closing = true;
    Changed.notify_all();
  }
  if (Thread.joinable())
    Thread.join();
  llvm::sys::fs::remove_directories(Settings.WorkDir);
  std::lock_guard<std::mutex> lock(Mutex);
  Closed = true;
}

InlinerEpisode::~InlinerEpisode() { close(); }

llvm::Expected<uint64_t> defaultNativeSize(const std::string &bitcode, const EpisodeSettings &settings) {
  if (std::error_code ec = llvm::sys::fs::create_directories(settings.WorkDir))
    return llvm::createStringError(ec, "cannot create %s: %s", settings.WorkDir.c_str(), ec.message().c_str());
  AdvisorSetup none;
  none.Enabled = false;
  ModuleCommands commands =
      moduleCommands(settings.Compiler, Problem::Inliner, ModuleInputs{bitcode, {}}, none, settings.WorkDir);
  for (const auto &argv : {commands.Compile, *commands.Codegen}) {
    CompileOutcome outcome = runCompile(job(argv, settings, joinPath(settings.WorkDir, "baseline.stderr"), bitcode));
    if (outcome.Result != CompileOutcome::Status::Ok)
      return llvm::createStringError("%s: the default compile failed (%s): %s", bitcode.c_str(), outcome.Reason.c_str(),
                                     outcome.Detail.c_str());
  }
  return berkeleyTextSize(commands.Native);
}

} // namespace mlgo
