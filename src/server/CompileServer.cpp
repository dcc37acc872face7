#include "mlgo/server/CompileServer.h"
#include "mlgo/server/CompileServerProtocol.h"
#include "mlgo/support/ChildProcess.h" // SpawnStep
#include "mlgo/support/Landlock.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mlgo::server {
namespace {

struct SetupFailure {
  int Step;
  int Errno;
};

// In the compile child, before the tool runs: what an exec'd compiler gets
// from ChildProcess::spawn (own process group, default signals, redirected
// streams, work directory, Landlock, TMPDIR). Reports {step, errno} on
// `report` and exits 127 on failure; closes `report` on success.
void setUpChild(const CompileRequest &request, int rulesetFd, int report, pid_t harvester) {
  ::setpgid(0, 0); // its own group: a timeout kills everything it started
  auto fail = [&](SpawnStep step) {
    SetupFailure failure{static_cast<int>(step), errno};
    [[maybe_unused]] ssize_t n = ::write(report, &failure, sizeof(failure));
    ::_exit(127);
  };
  // The harvester's child from the start (CLONE_PARENT): it dies with the
  // harvester, as an exec'd compiler does. Checked after the prctl, so that a
  // harvester that died first is seen (we would have been reparented).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != harvester) {
    errno = ESRCH;
    fail(SpawnStep::Adopt);
  }
  struct sigaction byDefault {};
  byDefault.sa_handler = SIG_DFL;
  sigemptyset(&byDefault.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig)
    ::sigaction(sig, &byDefault, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  int in = ::open("/dev/null", O_RDONLY);
  if (in < 0)
    fail(SpawnStep::OpenStdin);
  int out = ::open(request.StdoutPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0)
    fail(SpawnStep::OpenStdout);
  int err = ::open(request.StderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err < 0)
    fail(SpawnStep::OpenStderr);
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0)
    fail(SpawnStep::Redirect);
  if (!request.WorkingDirectory.empty() && ::chdir(request.WorkingDirectory.c_str()) != 0)
    fail(SpawnStep::ChangeDirectory);
  if (rulesetFd >= 0)
    if (int e = applyLandlockRuleset(rulesetFd)) {
      errno = e;
      fail(SpawnStep::Confine);
    }
  if (!request.ConfineWritesTo.empty())
    ::setenv("TMPDIR", request.ConfineWritesTo.c_str(), 1);
  // Nothing of the server's reaches the tool: not its pipes, not the ruleset
  // (the report pipe too: the server reads its end of file as success).
  if (::syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
    for (int fd = 3; fd < 1024; ++fd)
      ::close(fd);
}

// Test seam (docs/compile-server.md): MLGO_COMPILE_SERVER_FAULT=abort:TEXT
// or hang:TEXT makes a child whose argv mentions TEXT abort or hang where
// the tool would run, so that tests can crash one module of a real run.
struct Fault {
  std::string Kind, Text;
};
std::optional<Fault> injectedFault() {
  const char *spec = std::getenv("MLGO_COMPILE_SERVER_FAULT");
  if (!spec)
    return std::nullopt;
  std::string s = spec;
  size_t colon = s.find(':');
  if (colon == std::string::npos)
    return std::nullopt;
  return Fault{s.substr(0, colon), s.substr(colon + 1)};
}

void maybeFail(const std::optional<Fault> &fault, const CompileRequest &request) {
  if (!fault)
    return;
  for (const std::string &arg : request.Argv)
    if (arg.find(fault->Text) != std::string::npos) {
      if (fault->Kind == "abort")
        std::abort();
      if (fault->Kind == "hang")
        while (true)
          ::pause();
    }
}

CompileReply start(const CompileRequest &request, pid_t harvester, const std::optional<Fault> &fault) {
  CompileReply reply;
  ToolEntry entry = toolEntry(request.Tool);
  OptThenLlcEntry optThenLlc = nullptr;
  if (!request.CodegenArgv.empty()) {
    optThenLlc = request.Tool == "opt" ? optThenLlcEntry() : nullptr;
    if (!optThenLlc) {
      reply.Message = "this compile server cannot run llc after " + request.Tool;
      return reply;
    }
  }
  if (!entry) {
    reply.Message = "this compile server cannot run " + request.Tool;
    return reply;
  }
  LandlockRuleset confinement;
  if (!request.ConfineWritesTo.empty()) {
    auto made = LandlockRuleset::beneath(request.ConfineWritesTo, request.AlsoWritable, request.ReadExec);
    if (!made) {
      reply.Message = llvm::toString(made.takeError());
      return reply;
    }
    confinement = std::move(*made);
  }
  int report[2];
  if (::pipe(report) != 0) {
    reply.Message = std::string("pipe: ") + std::strerror(errno);
    return reply;
  }
  // A sibling, not a child: CLONE_PARENT makes the compile child the
  // harvester's own child (the harvester waits for it, times it out and reaps
  // it, as an exec'd compiler), with one copy of our page tables instead of
  // the two a fork-and-fork-again would take. The server is single-threaded,
  // so the raw clone (no fork handlers) leaves no lock held in the child.
  // As the exec'd tool would be named (opt-22, llc-22): taken at once in the
  // child, so that it is never seen under the server's name.
  std::string name = request.Argv[0].substr(request.Argv[0].rfind('/') + 1);
  pid_t child = static_cast<pid_t>(::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  if (child < 0) {
    reply.Message = std::string("clone: ") + std::strerror(errno);
    ::close(report[0]);
    ::close(report[1]);
    return reply;
  }
  if (child == 0) {
    ::prctl(PR_SET_NAME, name.c_str());
    ::close(report[0]);
    setUpChild(request, confinement.fd(), report[1], harvester);
    maybeFail(fault, request);
    auto cArgv = [](const std::vector<std::string> &args) {
      std::vector<char *> argv;
      for (const std::string &arg : args)
        argv.push_back(const_cast<char *>(arg.c_str()));
      argv.push_back(nullptr);
      return argv;
    };
    std::vector<char *> argv = cArgv(request.Argv), codegenArgv = cArgv(request.CodegenArgv);
    int argc = static_cast<int>(request.Argv.size());
    int status = optThenLlc
                     ? optThenLlc(argc, argv.data(), static_cast<int>(request.CodegenArgv.size()), codegenArgv.data())
                     : entry(argc, argv.data());
    // The tool has closed its outputs; what remains is buffered output and
    // the destructors of libLLVM's thousands of static options, which an
    // exiting child need not run (nor pay the page faults for).
    llvm::outs().flush();
    llvm::errs().flush();
    std::fflush(nullptr);
    ::_exit(status);
  }
  ::close(report[1]);
  ssize_t got;
  reply.Pid = child;
  SetupFailure failure{};
  while ((got = ::read(report[0], &failure, sizeof(failure))) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got == sizeof(failure)) {
    reply.FailedStep = failure.Step;
    reply.Errno = failure.Errno;
  }
  return reply;
}

} // namespace

int serve(int in, int out, const std::function<void(unsigned)> &beforeFork) {
  // The harvester handles interrupts; the server lives until its pipe closes.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  pid_t harvester = ::getppid();
  std::optional<Fault> fault = injectedFault();
  if (!writeMessage(out, {"mlgo-compile-server", std::to_string(ProtocolVersion), LLVM_VERSION_STRING}))
    return 1;
  unsigned served = 0;
  while (auto message = readMessage(in)) {
    if (beforeFork)
      beforeFork(served++);
    auto request = decodeRequest(*message);
    CompileReply reply;
    if (!request)
      reply.Message = "malformed request";
    else
      reply = start(*request, harvester, fault);
    if (!writeMessage(out, encodeReply(reply)))
      return 1;
  }
  return 0;
}

} // namespace mlgo::server
