#include "mlgo/compile/CompileServerClient.h"

#include "mlgo/compile/OwnLlvmTools.h"
#include "mlgo/server/CompileServerProtocol.h"

#include "llvm/Config/llvm-config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/prctl.h>

namespace mlgo {

char CompileServerError::ID = 0;

llvm::Error becomeSubreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                   "cannot become a child subreaper (needed by the compile server): %s",
                                   std::strerror(errno));
  return llvm::Error::success();
}

namespace {
// /proc files report size 0: read them as a stream.
long vmHwmKb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::strtol(line.c_str() + 6, nullptr, 10);
  return 0;
}
} // namespace

llvm::Error CompileServerClient::start() { return ensureRunning(); }

llvm::Error CompileServerClient::ensureRunning() {
  if (Server && !Server->exitedNoReap(false))
    return llvm::Error::success();
  stop();
  if (llvm::Error e = becomeSubreaper())
    return e;
  SpawnOptions options;
  options.Argv = {Settings.Path};
  if (Settings.Clang)
    options.Argv.push_back("--tools=clang");
  for (const std::string &library : Settings.Preload)
    options.Argv.push_back("--preload=" + library);
  if (!Settings.InlinerPolicy.empty())
    options.Argv.push_back("--inliner_policy=" + Settings.InlinerPolicy);
  options.StderrPath = Settings.StderrPath.empty() ? "/dev/null" : Settings.StderrPath;
  options.PipeStdin = options.PipeStdout = true;
  // Bound from its first exec: otherwise the server runs itself again under
  // LD_BIND_NOW, and pays libLLVM's start-up twice (mlgo-compile-server.cpp).
  options.Environment = {"LD_BIND_NOW=1", "MLGO_COMPILE_SERVER_BOUND=1"};
  // malloc on transparent huge pages: a compile's heap faults in 2 MiB at a
  // time instead of 4 KiB (a third fewer page faults, ~4% of the harvest's
  // time on zstd). A setting of the user's wins.
  // A crashing child's stack dump is symbolized by our LLVM's symbolizer,
  // which its confinement lets it run (the first in PATH may be another
  // LLVM's, outside the toolchain: docs/security.md). A setting of the user's wins.
  if (std::string symbolizer = ownLlvmTool("llvm-symbolizer");
      !symbolizer.empty() && !std::getenv("LLVM_SYMBOLIZER_PATH"))
    options.Environment.push_back("LLVM_SYMBOLIZER_PATH=" + symbolizer);
  const char *tunables = std::getenv("GLIBC_TUNABLES");
  if (!tunables)
    options.Environment.push_back("GLIBC_TUNABLES=glibc.malloc.hugetlb=1");
  else if (!std::strstr(tunables, "glibc.malloc.hugetlb"))
    options.Environment.push_back(std::string("GLIBC_TUNABLES=") + tunables + ":glibc.malloc.hugetlb=1");
  auto child = ChildProcess::spawn(options);
  if (!child)
    return child.takeError();
  ++Starts;
  Server = std::move(*child);
  auto greeting = server::readMessage(Server->stdoutFd());
  if (!greeting || greeting->size() != 3 || (*greeting)[0] != "mlgo-compile-server" ||
      (*greeting)[1] != std::to_string(server::ProtocolVersion) || (*greeting)[2] != LLVM_VERSION_STRING) {
    std::string tail = fileTail(options.StderrPath, 600);
    stop();
    return llvm::createStringError("%s did not start as a compile server for LLVM %s (protocol %u)%s%s",
                                   Settings.Path.c_str(), LLVM_VERSION_STRING, server::ProtocolVersion,
                                   tail.empty() ? "" : ": ", tail.c_str());
  }
  return llvm::Error::success();
}

void CompileServerClient::stop() {
  if (!Server)
    return;
  if (Server->running())
    PeakRssKb = std::max(PeakRssKb, vmHwmKb(Server->pid()));
  Server->closeStdin(); // end of requests: the server exits
  Server->killGroup();
  Server->wait();
  Server.reset();
}

long CompileServerClient::peakRssKb() const {
  long now = Server && Server->running() ? vmHwmKb(Server->pid()) : 0;
  return std::max(PeakRssKb, now);
}

llvm::Expected<ChildProcess> CompileServerClient::spawn(const std::string &tool, const SpawnOptions &options,
                                                        const std::vector<std::string> &codegen) {
  server::CompileRequest request;
  request.Tool = tool;
  request.Argv = options.Argv;
  request.CodegenArgv = codegen;
  request.StdoutPath = options.StdoutPath;
  request.StderrPath = options.StderrPath;
  request.WorkingDirectory = options.WorkingDirectory;
  request.ConfineWritesTo = options.ConfineWritesTo;
  request.AlsoWritable = options.AlsoWritable;
  request.ReadExec = options.ReadExec;
  std::vector<std::string> message = server::encodeRequest(request);
  // A server that died between compiles (nothing of ours in flight) is
  // replaced and the request sent again.
  // The child is ours before its pid arrives: no orphan reaping meanwhile.
  ChildRegistryHold hold;
  bool sent = false;
  for (int attempt = 0; attempt < 2 && !sent; ++attempt) {
    if (llvm::Error e = ensureRunning())
      return llvm::make_error<CompileServerError>("the compile server cannot start: " + llvm::toString(std::move(e)));
    sent = server::writeMessage(Server->stdinFd(), message);
    if (!sent)
      stop();
  }
  if (!sent)
    return llvm::make_error<CompileServerError>("the compile server " + Settings.Path + " does not take requests");
  auto answer = server::readMessage(Server->stdoutFd());
  std::optional<server::CompileReply> reply = answer ? server::decodeReply(*answer) : std::nullopt;
  if (!reply) {
    std::string status = Server->exitedNoReap(false) ? " (it died: " + Server->wait().describe() + ")" : "";
    stop();
    return llvm::make_error<CompileServerError>("the compile server gave no answer for " + tool + status);
  }
  if (reply->Pid <= 0)
    return llvm::make_error<CompileServerError>("the compile server could not start " + tool + ": " + reply->Message);
  ChildProcess child = ChildProcess::adopt(static_cast<pid_t>(reply->Pid));
  if (reply->FailedStep >= 0) {
    child.wait();
    return spawnStepError(options, static_cast<SpawnStep>(reply->FailedStep), reply->Errno);
  }
  return child;
}

} // namespace mlgo
