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

// Test seam (docs/harvest-exploration.md#exploring-by-forking): MLGO_EXPLORE_CHAIN_FAULT=abort:I or
// hang:I makes explored trajectory I crash or hang where it resumes;
// die:I makes its checkpoint exit before it is resumed; slow:I makes
// trajectory I outlast the timeout (link:I: plantLinkIfAsked).
bool faultIs(llvm::StringRef kind, unsigned index) {
  const char *spec = std::getenv("MLGO_EXPLORE_CHAIN_FAULT");
  if (!spec)
    return false;
  auto [what, which] = llvm::StringRef(spec).split(':');
  unsigned target = 0;
  return what == kind && !which.getAsInteger(10, target) && target == index;
}

void maybeFail(unsigned index) {
  if (faultIs("abort", index))
    std::abort();
  if (faultIs("hang", index))
    while (true)
      ::pause();
}

// When this process started (/proc/self/stat's starttime): the base
// compile's own clock starts with its process, as the harvester's does.
std::chrono::steady_clock::time_point processStart() {
  auto now = std::chrono::steady_clock::now();
  int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return now;
  char text[1024];
  ssize_t n = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (n <= 0)
    return now;
  text[n] = '\0';
  // Fields after the command (which may hold spaces) start after its ')'; starttime is field 22.
  const char *at = std::strrchr(text, ')');
  for (int field = 2; at && field < 22; ++field)
    at = std::strchr(at + 1, ' ');
  timespec boot{};
  long ticks = ::sysconf(_SC_CLK_TCK);
  if (!at || ticks <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
    return now;
  double startedAfterBoot = std::strtod(at + 1, nullptr) / static_cast<double>(ticks);
  double running = static_cast<double>(boot.tv_sec) + static_cast<double>(boot.tv_nsec) / 1e9 - startedAfterBoot;
  if (running < 0 || running > 1e6)
    return now;
  return now - std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(running));
}

// fork(2), the child tied to this process: it dies with it, and exits at
// once if it already has.
pid_t forkTied() {
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(0);
  }
  return pid;
}

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

void ExplorationChain::plantLinkIfAsked() const {
  unsigned index = Index;
  std::string path = trajectoryDir(Index);
  if (!faultIs("link", index))
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
  else if (order == "star")
    spec.How = ChainSpec::Order::Star;
  else
    return llvm::createStringError("-mlgo-inliner-explore: the order must be margin, logits, first or star, not '%s'",
                                   order.str().c_str());
  spec.Dir = dir.str();
  return spec;
}

ExplorationChain::ExplorationChain(ChainSpec spec, std::string then, std::function<void(const std::string &)> onResume)
    : Spec(std::move(spec)), Then(std::move(then)), OnResume(std::move(onResume)), Started(processStart()) {}

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
  if (Spec.How == ChainSpec::Order::Star)
    return Index == 0 && step < Spec.Trajectories ? rollOut(step, decision) : decision;
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
  double prefix = secondsSince(Started);
  pid_t pid = forkTied();
  if (pid == 0) {
    // The checkpoint: it dies with this trajectory unless resumed by it.
    ::close(go[1]);
    ::close(done[0]);
    if (DoneFd >= 0) { // the parent's line to its own parent is not ours
      ::close(DoneFd);
      DoneFd = -1;
    }
    if (Pending) { // the previous checkpoint is the parent's to drop
      ::close(Pending->Go);
      ::close(Pending->Done);
      Pending.reset();
    }
    if (faultIs("die", Index + 1)) // test seam: a checkpoint that is gone when resumed
      ::_exit(0);
    auto paused = std::chrono::steady_clock::now();
    char byte;
    if (!readAll(go[0], &byte, 1))
      ::_exit(0);
    ::close(go[0]);
    DoneFd = done[1];
    Started += std::chrono::steady_clock::now() - paused;
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
  Pending = Checkpoint{pid, go[1], done[0], step, prefix};
  return decision;
}

bool ExplorationChain::rollOut(size_t step, bool decision) {
  int done[2];
  if (::pipe2(done, O_CLOEXEC) != 0)
    return decision; // harvest-logs compiles this rollout itself
  double prefix = secondsSince(Started);
  pid_t pid = forkTied();
  if (pid == 0) {
    // The rollout: it dies with the base, and runs now.
    ::close(done[0]);
    DoneFd = done[1];
    Index = static_cast<unsigned>(step); // becomeTrajectory makes it step + 1
    becomeTrajectory(step);
    return !decision;
  }
  ::close(done[1]);
  if (pid < 0) {
    ::close(done[0]);
    return decision;
  }
  std::string dir = trajectoryDir(static_cast<unsigned>(step) + 1);
  ::mkdir(Spec.Dir.c_str(), 0755);
  ::mkdir(dir.c_str(), 0755);
  // Its whole compile, its prefix included, gets the timeout; the base's
  // own clock does not count the wait.
  auto waiting = std::chrono::steady_clock::now();
  awaitTrajectory(static_cast<unsigned>(step) + 1, pid, done[0], step, Spec.TimeoutSeconds - prefix, true);
  Started += std::chrono::steady_clock::now() - waiting;
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
  // A checkpoint that died (out of memory, say) must cost its trajectory,
  // not this one: writing to its pipe then fails instead of killing us.
  ::signal(SIGPIPE, SIG_IGN);
  // The parent's timeout covers this trajectory's own compile, not the
  // explorations that follow it.
  if (DoneFd >= 0) {
    writeAll(DoneFd, &status, sizeof(status));
    ::close(DoneFd);
    DoneFd = -1;
  }
  if (faultIs("slow", Index)) // test seam: a compile that takes longer than the timeout
    ::usleep(static_cast<useconds_t>((Spec.TimeoutSeconds + 0.5) * 1e6));
  if (Index == 0 && secondsSince(Started) > Spec.TimeoutSeconds) {
    dropPending();
    ::mkdir(Spec.Dir.c_str(), 0755);
    int marker = ::open((Spec.Dir + "/base-overran").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (marker >= 0)
      ::close(marker);
    ::raise(SIGKILL); // as the harvester's timeout would have ended it
  }
  if (!Pending)
    return;
  if (status != 0) { // a failed trajectory is no round's parent
    dropPending();
    return;
  }
  Checkpoint next = *Pending;
  Pending.reset();
  std::string dir = trajectoryDir(Index + 1);
  ::mkdir(Spec.Dir.c_str(), 0755);
  ::mkdir(dir.c_str(), 0755);
  ::malloc_trim(0); // this process only waits from here on
  // Its whole compile, its prefix included, gets the timeout.
  double budget = Spec.TimeoutSeconds - next.PrefixSeconds;
  bool resumed = budget > 0 && writeAll(next.Go, "g", 1);
  ::close(next.Go);
  awaitTrajectory(Index + 1, next.Pid, next.Done, next.Step, budget, resumed);
}

void ExplorationChain::awaitTrajectory(unsigned index, pid_t pid, int done, size_t step, double budget, bool started) {
  // A trajectory that died must cost itself, not this one: writing to its
  // pipe then fails instead of killing us.
  ::signal(SIGPIPE, SIG_IGN);
  int childStatus = 0;
  bool got = false;
  bool timedOut = false;
  if (started && budget > 0) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(budget));
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timedOut = true;
        break;
      }
      pollfd p{done, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
      if (r < 0 && errno == EINTR)
        continue;
      if (r > 0)
        got = readAll(done, &childStatus, sizeof(childStatus));
      timedOut = r <= 0; // a poll that fails cannot wait: as a timeout
      break;
    }
  }
  if (timedOut || !started || budget <= 0)
    ::kill(pid, SIGKILL); // its own checkpoints die with it
  int waited = 0;
  while (::waitpid(pid, &waited, 0) < 0 && errno == EINTR) {
  }
  ::close(done);
  char json[256];
  if (got)
    std::snprintf(json, sizeof(json), "{\"status\":\"exit\",\"exit\":%d,\"flipped_step\":%zu,\"then\":", childStatus,
                  step);
  else if (timedOut || budget <= 0)
    std::snprintf(json, sizeof(json), "{\"status\":\"timeout\",\"flipped_step\":%zu,\"then\":", step);
  else if (WIFSIGNALED(waited))
    std::snprintf(json, sizeof(json),
                  "{\"status\":\"signal\",\"signal\":%d,\"flipped_step\":%zu,\"then\":", WTERMSIG(waited), step);
  else
    std::snprintf(json, sizeof(json), "{\"status\":\"died\",\"exit\":%d,\"flipped_step\":%zu,\"then\":",
                  WIFEXITED(waited) ? WEXITSTATUS(waited) : -1, step);
  std::string then;
  for (char c : Then) { // a policy spec: a path at most; escaped as JSON wants
    if (c == '"' || c == '\\')
      then += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    then += c;
  }
  writeStatus(trajectoryDir(index), std::string(json) + "\"" + then + "\"}\n");
}

} // namespace mlgo::plugin
