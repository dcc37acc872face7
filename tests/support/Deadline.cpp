#include "Deadline.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace mlgo::test {

::testing::AssertionResult waitUntil(const std::function<bool()> &condition, std::chrono::milliseconds timeout,
                                     const std::string &what, std::chrono::milliseconds poll) {
  auto start = Clock::now();
  auto deadline = start + timeout;
  while (!condition()) {
    if (Clock::now() >= deadline) {
      if (condition()) // one last look: the poll may have slept past it
        break;
      return ::testing::AssertionFailure() << "gave up after " << timeout.count() << " ms waiting for " << what;
    }
    std::this_thread::sleep_for(poll);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult waitForExit(pid_t pid, std::chrono::milliseconds timeout, int &status) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid)
      return ::testing::AssertionSuccess();
    if (got < 0 && errno != EINTR)
      return ::testing::AssertionFailure() << "cannot wait for process " << pid << ": " << std::strerror(errno);
    if (Clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (::getpgid(pid) == pid)
    ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0); // SIGKILL ends it: this wait is short
  return ::testing::AssertionFailure() << "process " << pid << " did not end within " << timeout.count()
                                       << " ms; killed it";
}

int shellExitCode(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

::testing::AssertionResult openFifoForWriting(const std::string &path, std::chrono::milliseconds timeout, int &fd) {
  int lastErrno = 0;
  bool opened = static_cast<bool>(waitUntil(
      [&] {
        fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        lastErrno = fd < 0 ? errno : 0;
        return fd >= 0 || lastErrno != ENXIO; // ENXIO: no reader yet
      },
      timeout, "a reader of " + path));
  if (fd < 0)
    return ::testing::AssertionFailure() << "cannot open " << path << " for writing: "
                                         << (opened ? std::strerror(lastErrno)
                                                    : "no reader opened it within " + std::to_string(timeout.count()) +
                                                          " ms");
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return ::testing::AssertionSuccess();
}

BackgroundCommand::BackgroundCommand(const std::string &command, const std::string &stderrPath,
                                     const std::string &stdoutPath) {
  start({"/bin/sh", "-c", "exec " + command}, stderrPath, stdoutPath);
}

BackgroundCommand::BackgroundCommand(const std::vector<std::string> &argv, const std::string &stderrPath,
                                     const std::string &stdoutPath) {
  start(argv, stderrPath, stdoutPath);
}

void BackgroundCommand::start(const std::vector<std::string> &argv, const std::string &stderrPath,
                              const std::string &stdoutPath) {
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  Pid = ::fork();
  if (Pid == 0) {
    ::setpgid(0, 0);
    int in = ::open("/dev/null", O_RDONLY);
    int out = ::open(stdoutPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(stderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0)
      ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (Pid > 0)
    ::setpgid(Pid, Pid); // also here, so the group exists before anyone signals it
  else
    Reaped = true;
}

BackgroundCommand::~BackgroundCommand() {
  if (Reaped)
    return;
  ::kill(-Pid, SIGKILL);
  ::kill(Pid, SIGKILL);
  int status = 0;
  ::waitpid(Pid, &status, 0);
}

void BackgroundCommand::signal(int signal, bool group) {
  if (!Reaped)
    ::kill(group ? -Pid : Pid, signal);
}

::testing::AssertionResult BackgroundCommand::wait(std::chrono::milliseconds timeout, int &status) {
  if (Status) {
    status = *Status;
    return ::testing::AssertionSuccess();
  }
  if (Reaped)
    return ::testing::AssertionFailure() << "process " << Pid << " was already reaped";
  ::testing::AssertionResult ended = waitForExit(Pid, timeout, status);
  Reaped = true; // by waitForExit, whether it ended or was killed
  return ended;
}

bool BackgroundCommand::exited() {
  if (Reaped)
    return true;
  int status = 0;
  if (::waitpid(Pid, &status, WNOHANG) == Pid) {
    Reaped = true;
    Status = status;
  }
  return Reaped;
}

} // namespace mlgo::test
