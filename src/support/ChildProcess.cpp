#include "mlgo/support/ChildProcess.h"
#include "mlgo/support/Landlock.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <pthread.h>
#include <set>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace mlgo {
namespace {
// Runs `work` on one thread that lives as long as the process and keeps
// every signal blocked. Children are forked there: PR_SET_PDEATHSIG fires
// when the forking *thread* exits, and TBB workers come and go.
class SpawnerThread {
public:
  // Never destroyed: its thread never ends. A child forked from this process
  // (not through us) has no copy of the thread: it starts its own.
  static SpawnerThread &get() {
    static std::atomic<SpawnerThread *> Instance{nullptr};
    static std::once_flag AtFork;
    std::call_once(AtFork, [] { ::pthread_atfork(nullptr, nullptr, [] { Instance.store(nullptr); }); });
    SpawnerThread *current = Instance.load();
    if (current)
      return *current;
    auto *fresh = new SpawnerThread();
    if (!Instance.compare_exchange_strong(current, fresh)) {
      delete fresh; // another thread made it first
      return *current;
    }
    fresh->start();
    return *fresh;
  }
  void run(llvm::function_ref<void()> work) {
    std::lock_guard<std::mutex> one(Serial);
    std::unique_lock<std::mutex> lock(Mutex);
    Work = &work;
    Done = false;
    Wake.notify_all();
    Wake.wait(lock, [&] { return Done; });
  }

private:
  void start() {
    // Blocked before the thread starts (it inherits the mask), so no signal
    // reaches it even before its first instruction.
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &old);
    std::thread([this] { loop(); }).detach();
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  void loop() {
    std::unique_lock<std::mutex> lock(Mutex);
    while (true) {
      Wake.wait(lock, [&] { return Work != nullptr; });
      (*Work)();
      Work = nullptr;
      Done = true;
      Wake.notify_all();
    }
  }
  std::mutex Serial, Mutex;
  std::condition_variable Wake;
  llvm::function_ref<void()> *Work = nullptr;
  bool Done = false;
};

void onSpawnerThread(llvm::function_ref<void()> work) { SpawnerThread::get().run(work); }

// The children some ChildProcess owns (until it reaps them); the rest are
// orphans for reapOrphans(). Recursive: adopt() runs under a ChildRegistryHold.
std::recursive_mutex &registryMutex() {
  static auto *m = new std::recursive_mutex();
  return *m;
}
std::set<pid_t> &ownedChildren() {
  static auto *owned = new std::set<pid_t>();
  return *owned;
}
void own(pid_t pid) {
  std::lock_guard<std::recursive_mutex> lock(registryMutex());
  ownedChildren().insert(pid);
}
void disown(pid_t pid) {
  std::lock_guard<std::recursive_mutex> lock(registryMutex());
  ownedChildren().erase(pid);
}

struct SpawnFailure {
  SpawnStep Step;
  int Errno;
};

ExitStatus decode(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) {
    s.Exited = true;
    s.Code = WEXITSTATUS(status);
  } else {
    s.Code = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
  }
  return s;
}
} // namespace

llvm::Error spawnStepError(const SpawnOptions &options, SpawnStep step, int error) {
  const char *program = options.Argv.empty() ? "" : options.Argv[0].c_str();
  std::string what;
  switch (step) {
  case SpawnStep::OpenStdin:
    what = "cannot open /dev/null as the standard input";
    break;
  case SpawnStep::OpenStdout:
    what = "cannot open the standard output file " + options.StdoutPath;
    break;
  case SpawnStep::OpenStderr:
    what = "cannot open the standard error file " + options.StderrPath;
    break;
  case SpawnStep::Redirect:
    what = "cannot redirect the standard streams";
    break;
  case SpawnStep::ChangeDirectory:
    what = "cannot change to the working directory " + options.WorkingDirectory;
    break;
  case SpawnStep::Confine:
    what = "cannot confine it to its work directory and inputs (Landlock)";
    break;
  case SpawnStep::Exec:
    what = "cannot execute";
    break;
  case SpawnStep::Adopt:
    what = "the compile server's child was not adopted by the harvester";
    break;
  case SpawnStep::LimitMemory:
    what = "cannot bound its memory (setrlimit RLIMIT_DATA)";
    break;
  }
  return llvm::createStringError(std::error_code(error, std::generic_category()), "cannot run %s: %s: %s", program,
                                 what.c_str(), std::strerror(error));
}

std::string ExitStatus::describe() const {
  if (Exited)
    return "exit " + std::to_string(Code);
  return "signal " + std::to_string(Code) + " (" + strsignal(Code) + ")";
}

llvm::Expected<ChildProcess> ChildProcess::spawn(const SpawnOptions &options) {
  if (options.Argv.empty())
    return llvm::createStringError("empty command line");
  int inPipe[2] = {-1, -1}, outPipe[2] = {-1, -1}, errorPipe[2] = {-1, -1};
  auto closeAll = [&] {
    for (int fd : {inPipe[0], inPipe[1], outPipe[0], outPipe[1], errorPipe[0], errorPipe[1]})
      if (fd >= 0)
        ::close(fd);
  };
  if ((options.PipeStdin && ::pipe2(inPipe, O_CLOEXEC) != 0) ||
      (options.PipeStdout && ::pipe2(outPipe, O_CLOEXEC) != 0) || ::pipe2(errorPipe, O_CLOEXEC) != 0) {
    int err = errno;
    closeAll();
    return llvm::createStringError(std::error_code(err, std::generic_category()), "pipe: %s", std::strerror(err));
  }
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls. That includes the Landlock ruleset and the
  // environment with TMPDIR in the confined directory.
  LandlockRuleset confinement;
  std::vector<std::string> setEnvironment = options.Environment;
  if (!options.ConfineWritesTo.empty()) {
    auto made = LandlockRuleset::beneath(options.ConfineWritesTo, options.AlsoWritable, options.ReadExec);
    if (!made) {
      closeAll();
      return made.takeError();
    }
    confinement = std::move(*made);
    setEnvironment.push_back("TMPDIR=" + options.ConfineWritesTo);
  }
  // Ours, less every variable the options set, then theirs.
  std::vector<char *> environment;
  if (!setEnvironment.empty()) {
    auto isSet = [&](const char *entry) {
      for (const std::string &set : setEnvironment) {
        size_t name = set.find('=') + 1;
        if (std::strncmp(entry, set.c_str(), name) == 0)
          return true;
      }
      return false;
    };
    for (char **entry = environ; *entry; ++entry)
      if (!isSet(*entry))
        environment.push_back(*entry);
    for (std::string &set : setEnvironment)
      environment.push_back(set.data());
    environment.push_back(nullptr);
  }
  const int rulesetFd = confinement.fd();
  char **const envp = environment.empty() ? nullptr : environment.data();
  std::vector<char *> argv;
  for (const std::string &a : options.Argv)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  const char *stdoutPath = options.StdoutPath.c_str(), *stderrPath = options.StderrPath.c_str();
  const char *volatile cwd = options.WorkingDirectory.empty() ? nullptr : options.WorkingDirectory.c_str();
  pid_t parent = ::getpid();
  const int stdinFd = options.PipeStdin ? inPipe[0] : -1, stdoutFd = options.PipeStdout ? outPipe[1] : -1;
  const int errorFd = errorPipe[1];

  // vfork: no copy of our page tables (libLLVM is large) for a child that
  // only sets itself up and execs, like glibc's posix_spawn, which cannot
  // set PR_SET_PDEATHSIG. The child shares our memory until it execs, so
  // none of our signal handlers may run in it: it is forked by the spawner
  // thread, which keeps every signal blocked, and resets every handled
  // signal to its default before it unblocks them.
  pid_t pid = -1;
  int forkErrno = 0;
  // Within the hard limit we were given (an unprivileged process cannot raise it).
  struct rlimit memoryLimit {};
  bool limitMemory = false;
  if (options.MemoryLimitBytes && ::getrlimit(RLIMIT_DATA, &memoryLimit) == 0) {
    rlim_t wanted = static_cast<rlim_t>(options.MemoryLimitBytes);
    limitMemory = memoryLimit.rlim_max == RLIM_INFINITY || wanted < memoryLimit.rlim_max;
    if (limitMemory)
      memoryLimit.rlim_cur = wanted;
  }
  // Owned before reapOrphans() could see it exit.
  std::lock_guard<std::recursive_mutex> registered(registryMutex());
  onSpawnerThread([&] {
    pid_t forked = ::vfork();
    if (forked != 0) { // the parent, once the child has exec'ed or exited
      pid = forked;
      forkErrno = forked < 0 ? errno : 0;
      return;
    }
    ::setpgid(0, 0); // its own group, so a timeout kills everything it started
    // If the harvester dies (even by SIGKILL), its compilers die too rather
    // than spin on a closed channel. The spawner thread lives as long as
    // the process, so this fires at the process' death, not a thread's.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(127);
    struct sigaction byDefault {};
    byDefault.sa_handler = SIG_DFL;
    sigemptyset(&byDefault.sa_mask);
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction current {};
      if (::sigaction(sig, nullptr, &current) != 0)
        continue;
      bool handled =
          (current.sa_flags & SA_SIGINFO) || (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
      if (handled)
        ::sigaction(sig, &byDefault, nullptr);
    }
    // An ignored SIGPIPE or SIGXFSZ would be inherited and change how
    // compilers fail. Ignoring first discards a signal sent to our process
    // group before setpgid (a Ctrl-C meant for us, not for the child).
    struct sigaction ignore = byDefault;
    ignore.sa_handler = SIG_IGN;
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGXFSZ}) {
      ::sigaction(sig, &ignore, nullptr);
      ::sigaction(sig, &byDefault, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // A failing step is reported to the parent as {step, errno}: write(2)
    // and _exit(2) only, both async-signal-safe.
    auto fail = [errorFd](SpawnStep step) {
      SpawnFailure failure{step, errno};
      [[maybe_unused]] ssize_t n = ::write(errorFd, &failure, sizeof(failure));
      ::_exit(127);
    };
    int in = stdinFd >= 0 ? stdinFd : ::open("/dev/null", O_RDONLY);
    if (in < 0)
      fail(SpawnStep::OpenStdin);
    int out = stdoutFd >= 0 ? stdoutFd : ::open(stdoutPath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    if (out < 0)
      fail(SpawnStep::OpenStdout);
    int err = ::open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    if (err < 0)
      fail(SpawnStep::OpenStderr);
    if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0)
      fail(SpawnStep::Redirect);
    if (cwd && ::chdir(cwd) != 0)
      fail(SpawnStep::ChangeDirectory);
    if (limitMemory && ::setrlimit(RLIMIT_DATA, &memoryLimit) != 0)
      fail(SpawnStep::LimitMemory);
    if (rulesetFd >= 0)
      if (int e = applyLandlockRuleset(rulesetFd)) {
        errno = e;
        fail(SpawnStep::Confine);
      }
    if (envp)
      ::execvpe(argv[0], argv.data(), envp);
    else
      ::execvp(argv[0], argv.data());
    fail(SpawnStep::Exec);
  });
  if (pid < 0) {
    closeAll();
    return llvm::createStringError(std::error_code(forkErrno, std::generic_category()), "vfork: %s",
                                   std::strerror(forkErrno));
  }
  ::close(errorPipe[1]);
  errorPipe[1] = -1;
  SpawnFailure failure{};
  ssize_t got;
  while ((got = ::read(errorPipe[0], &failure, sizeof(failure))) < 0 && errno == EINTR) {
  }
  if (inPipe[0] >= 0)
    ::close(inPipe[0]);
  if (outPipe[1] >= 0)
    ::close(outPipe[1]);
  ::close(errorPipe[0]);
  if (got > 0) {
    int status;
    ::waitpid(pid, &status, 0);
    disown(pid);
    if (inPipe[1] >= 0)
      ::close(inPipe[1]);
    if (outPipe[0] >= 0)
      ::close(outPipe[0]);
    return spawnStepError(options, failure.Step, failure.Errno);
  }
  own(pid);
  ChildProcess child;
  child.Pid = pid;
  child.StdinFd = inPipe[1];
  child.StdoutFd = outPipe[0];
  return child;
}

ChildProcess ChildProcess::adopt(pid_t pid) {
  own(pid);
  ChildProcess child;
  child.Pid = pid;
  return child;
}

ChildProcess::ChildProcess(ChildProcess &&other) noexcept { *this = std::move(other); }

ChildProcess &ChildProcess::operator=(ChildProcess &&other) noexcept {
  std::swap(Pid, other.Pid);
  std::swap(StdinFd, other.StdinFd);
  std::swap(StdoutFd, other.StdoutFd);
  std::swap(Status, other.Status);
  GroupKilled.store(other.GroupKilled.exchange(GroupKilled.load()));
  return *this;
}

ChildProcess::~ChildProcess() {
  closeStdin();
  if (StdoutFd >= 0)
    ::close(StdoutFd);
  if (running()) {
    killGroup();
    wait();
  }
}

void ChildProcess::closeStdin() {
  if (StdinFd >= 0)
    ::close(StdinFd);
  StdinFd = -1;
}

std::optional<ExitStatus> ChildProcess::poll() {
  if (Status || Pid <= 0)
    return Status;
  int status;
  pid_t r = ::waitpid(Pid, &status, WNOHANG);
  if (r == Pid) {
    Status = decode(status);
    disown(Pid);
    reapKilledGroup();
  }
  return Status;
}

ExitStatus ChildProcess::wait() {
  if (Status || Pid <= 0)
    return Status.value_or(ExitStatus{});
  int status;
  while (::waitpid(Pid, &status, 0) < 0 && errno == EINTR) {
  }
  Status = decode(status);
  disown(Pid);
  reapKilledGroup();
  return *Status;
}

void ChildProcess::reapKilledGroup() {
  if (!GroupKilled.load())
    return;
  // The leader is reaped, so its children (killed, or dead before it) have
  // been handed to us if we are a subreaper; otherwise to init, and there is
  // nothing of the group to wait for. Bounded: a member stuck in the kernel
  // is left to reapOrphans() rather than hold a worker.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (true) {
    int status;
    pid_t r = ::waitpid(-Pid, &status, WNOHANG);
    if (r > 0)
      continue;
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 || std::chrono::steady_clock::now() > until)
      return; // ECHILD: none of the group is ours any more
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

bool ChildProcess::exitedNoReap(bool block) {
  if (Status || Pid <= 0)
    return true;
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(Pid), &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG)) < 0) {
    if (errno != EINTR)
      return true;
  }
  return info.si_pid == Pid;
}

void ChildProcess::killGroup() {
  // Never pid 1: kill(-1) would signal every process we may.
  if (Pid > 1 && !Status) {
    GroupKilled.store(true);
    ::kill(-Pid, SIGKILL);
    ::kill(Pid, SIGKILL);
  }
}

void reapOrphans() {
  std::lock_guard<std::recursive_mutex> lock(registryMutex());
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator task("/proc/self/task", ec), end; task != end && !ec; task.increment(ec)) {
    std::ifstream children(task->path() + "/children");
    pid_t pid;
    while (children >> pid)
      if (!ownedChildren().count(pid)) {
        int status;
        ::waitpid(pid, &status, WNOHANG);
      }
  }
}

ChildRegistryHold::ChildRegistryHold() { registryMutex().lock(); }
ChildRegistryHold::~ChildRegistryHold() { registryMutex().unlock(); }

std::string fileTail(llvm::StringRef path, size_t bytes) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return "";
  llvm::StringRef all = (*buffer)->getBuffer();
  return all.take_back(bytes).str();
}

} // namespace mlgo
