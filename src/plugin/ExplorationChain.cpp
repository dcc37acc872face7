#include "ExplorationChain.h"
#include "mlgo/support/FileDescriptorIo.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mlgo::plugin {
namespace {

// Written beside the trajectory, then renamed: a status.json is whole.
void writeStatus(const std::string &dir, const std::string &json) {
  std::string path = dir + "/status.json", temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return; // no status: harvest-logs compiles the trajectory itself
  bool ok = writeAll(fd, json.data(), json.size());
  ok = ::close(fd) == 0 && ok;
  if (ok)
    ::rename(temporary.c_str(), path.c_str());
}

// Test seam (docs/harvest-logs.md): MLGO_EXPLORE_CHAIN_FAULT=abort:I or
// hang:I makes explored trajectory I crash or hang where it resumes
// (link:I: plantLinkIfAsked).
void maybeFail(unsigned index) {
  const char *spec = std::getenv("MLGO_EXPLORE_CHAIN_FAULT");
  if (!spec)
    return;
  llvm::StringRef text(spec);
  auto [kind, which] = text.split(':');
  unsigned target = 0;
  if (which.getAsInteger(10, target) || target != index)
    return;
  if (kind == "abort")
    std::abort();
  if (kind == "hang")
    while (true)
      ::pause();
}

} // namespace

void ExplorationChain::plantLinkIfAsked() const {
  unsigned index = Index;
  std::string path = trajectoryDir(Index);
  const char *spec = std::getenv("MLGO_EXPLORE_CHAIN_FAULT");
  unsigned target = 0;
  if (!spec || !llvm::StringRef(spec).consume_front("link:") || llvm::StringRef(spec + 5).getAsInteger(10, target) ||
      target != index)
    return;
  // Relative: the chain directory is moved into OUT afterwards.
  std::string aside = path + ".aside", name = aside.substr(aside.rfind('/') + 1);
  if (::rename(path.c_str(), aside.c_str()) != 0)
    return;
  if (::symlink(name.c_str(), path.c_str()) != 0)
    ::rename(aside.c_str(), path.c_str());
}

llvm::Expected<ChainSpec> parseChainSpec(llvm::StringRef text) {
  ChainSpec spec;
  auto [count, rest] = text.split(':');
  auto [order, rest2] = rest.split(':');
  auto [timeout, dir] = rest2.split(':');
  if (count.getAsInteger(10, spec.Trajectories) || timeout.getAsDouble(spec.TimeoutSeconds) ||
      spec.TimeoutSeconds <= 0 || dir.empty())
    return llvm::createStringError("-mlgo-inliner-explore must be K:ORDER:TIMEOUT_SECONDS:DIR, not '%s'",
                                   text.str().c_str());
  if (order == "margin")
    spec.How = ChainSpec::Order::Margin;
  else if (order == "logits")
    spec.How = ChainSpec::Order::Logits;
  else if (order == "first")
    spec.How = ChainSpec::Order::First;
  else
    return llvm::createStringError("-mlgo-inliner-explore: the order must be margin, logits or first, not '%s'",
                                   order.str().c_str());
  spec.Dir = dir.str();
  return spec;
}

ExplorationChain::ExplorationChain(ChainSpec spec, std::string then, std::function<void(const std::string &)> onResume)
    : Spec(std::move(spec)), Then(std::move(then)), OnResume(std::move(onResume)) {}

std::string ExplorationChain::trajectoryDir(unsigned index) const { return Spec.Dir + "/t" + std::to_string(index); }

void ExplorationChain::dropPending() {
  if (!Pending)
    return;
  ::kill(Pending->Pid, SIGKILL);
  int status;
  while (::waitpid(Pending->Pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::close(Pending->Go);
  ::close(Pending->Done);
  Pending.reset();
}

bool ExplorationChain::atDecision(size_t step, double certainty, bool decision) {
  if (Index >= Spec.Trajectories || step < From)
    return decision;
  // The step harvest-logs' next round would flip: the least certain after
  // the last flip, the first of equals (Exploration.cpp's nextStep).
  bool candidate = Spec.How == ChainSpec::Order::First ? step == From : !Least || certainty < *Least;
  if (!candidate)
    return decision;
  Least = certainty;
  int go[2], done[2];
  if (::pipe2(go, O_CLOEXEC) != 0) {
    dropPending(); // it is no longer the step to flip
    return decision;
  }
  if (::pipe2(done, O_CLOEXEC) != 0) {
    ::close(go[0]);
    ::close(go[1]);
    dropPending();
    return decision;
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    // The checkpoint: it dies with this trajectory unless resumed by it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(0);
    ::close(go[1]);
    ::close(done[0]);
    if (Pending) { // the previous checkpoint is the parent's to drop
      ::close(Pending->Go);
      ::close(Pending->Done);
      Pending.reset();
    }
    char byte;
    if (!readAll(go[0], &byte, 1))
      ::_exit(0);
    ::close(go[0]);
    DoneFd = done[1];
    becomeTrajectory(step);
    return !decision;
  }
  ::close(go[0]);
  ::close(done[1]);
  if (pid < 0) {
    ::close(go[1]);
    ::close(done[0]);
    dropPending();
    return decision;
  }
  dropPending();
  Pending = Checkpoint{pid, go[1], done[0], step};
  return decision;
}

void ExplorationChain::becomeTrajectory(size_t flippedStep) {
  ++Index;
  From = flippedStep + 1;
  Least.reset();
  std::string dir = trajectoryDir(Index);
  ::mkdir(Spec.Dir.c_str(), 0755);
  ::mkdir(dir.c_str(), 0755);
  int err = ::open((dir + "/compile.stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (err < 0 || ::dup2(err, 2) < 0)
    ::_exit(126); // its parent records how it ended; harvest-logs compiles it itself
  ::close(err);
  // Read by the compile server's llc step (OptLlcEntries.cpp): this trajectory's object.
  ::setenv("MLGO_INLINER_CHAIN_OBJECT", (dir + "/native.o").c_str(), 1);
  maybeFail(Index);
  OnResume(dir);
}

void ExplorationChain::finish(int status) {
  // The parent's timeout covers this trajectory's own compile, not the
  // explorations that follow it.
  if (DoneFd >= 0) {
    writeAll(DoneFd, &status, sizeof(status));
    ::close(DoneFd);
    DoneFd = -1;
  }
  if (!Pending)
    return;
  Checkpoint next = *Pending;
  Pending.reset();
  std::string dir = trajectoryDir(Index + 1);
  ::mkdir(Spec.Dir.c_str(), 0755);
  ::mkdir(dir.c_str(), 0755);
  ::malloc_trim(0); // this process only waits from here on
  bool resumed = writeAll(next.Go, "g", 1);
  ::close(next.Go);
  int childStatus = 0;
  bool got = false;
  bool timedOut = false;
  if (resumed) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(Spec.TimeoutSeconds);
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timedOut = true;
        break;
      }
      pollfd p{next.Done, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
      if (r < 0 && errno == EINTR)
        continue;
      if (r > 0)
        got = readAll(next.Done, &childStatus, sizeof(childStatus));
      timedOut = r == 0;
      break;
    }
  }
  if (timedOut || !resumed)
    ::kill(next.Pid, SIGKILL); // its own checkpoints die with it
  int waited = 0;
  while (::waitpid(next.Pid, &waited, 0) < 0 && errno == EINTR) {
  }
  ::close(next.Done);
  char json[256];
  if (got)
    std::snprintf(json, sizeof(json), "{\"status\":\"exit\",\"exit\":%d,\"flipped_step\":%zu,\"then\":", childStatus,
                  next.Step);
  else if (timedOut)
    std::snprintf(json, sizeof(json), "{\"status\":\"timeout\",\"flipped_step\":%zu,\"then\":", next.Step);
  else if (WIFSIGNALED(waited))
    std::snprintf(json, sizeof(json),
                  "{\"status\":\"signal\",\"signal\":%d,\"flipped_step\":%zu,\"then\":", WTERMSIG(waited), next.Step);
  else
    std::snprintf(json, sizeof(json), "{\"status\":\"died\",\"exit\":%d,\"flipped_step\":%zu,\"then\":",
                  WIFEXITED(waited) ? WEXITSTATUS(waited) : -1, next.Step);
  std::string then;
  for (char c : Then) { // a policy spec: a path at most; escaped as JSON wants
    if (c == '"' || c == '\\')
      then += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    then += c;
  }
  writeStatus(dir, std::string(json) + "\"" + then + "\"}\n");
}

} // namespace mlgo::plugin
