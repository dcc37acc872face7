#include "mlgo/policy/Policy.h"

#include "mlgo/support/ChildProcess.h"
#include "mlgo/support/Interrupt.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <optional>
#include <poll.h>
#include <unistd.h>

namespace mlgo {
namespace {

class ExecPolicy : public Policy {
public:
  ExecPolicy(std::string command, std::string stderrPath, bool certainty)
      : Command(std::move(command)), StderrPath(std::move(stderrPath)), Certainty(certainty) {}

  llvm::Error beginStream(const LogHeader &header, Deadline deadline) override {
    if (!Process || !Process->running()) {
      std::vector<std::string> argv = {"/bin/sh", "-c", Command};
      if (Certainty) // env execs the shell: the same process tree
        argv.insert(argv.begin(), {"/usr/bin/env", "MLGO_POLICY_CERTAINTY=1"});
      auto child = ChildProcess::spawn({argv, "/dev/null", StderrPath, true, true});
      if (!child)
        return child.takeError();
      Process.emplace(std::move(*child));
      // Our ends never block: every exchange is bounded by the module's
      // deadline and the interrupt flag (a policy that stops reading or
      // answering must not hold a worker forever).
      for (int fd : {Process->stdinFd(), Process->stdoutFd()})
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    return send(header.toLine(), deadline);
  }

  llvm::Error context(llvm::StringRef name, Deadline deadline) override {
    std::string line;
    llvm::raw_string_ostream os(line);
    TrainingLogWriter::contextLine(os, name);
    os.flush();
    return send(line, deadline);
  }

  llvm::Expected<std::string> decide(const Query &query, Deadline deadline) override {
    const TrainingLogReader &observation = query.Observation;
    std::string record = "{\"observation\":" + std::to_string(observation.observationIndex()) + "}\n";
    record += observation.observation().str();
    record += '\n';
    if (llvm::Error e = send(record, deadline))
      return e;
    size_t size = query.Advice.byteSize() + (Certainty ? sizeof(double) : 0);
    std::string reply(size, '\0');
    size_t got = 0;
    while (got < size) {
      ssize_t n = ::read(Process->stdoutFd(), reply.data() + got, size - got);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        if (llvm::Error e = waitFor(Process->stdoutFd(), POLLIN, deadline, [&] {
              return "did not answer observation " + std::to_string(observation.observationIndex()) + " in time (" +
                     std::to_string(got) + " of " + std::to_string(size) + " bytes)";
            }))
          return e;
        continue;
      }
      if (n <= 0)
        return failure("closed its output after " + std::to_string(got) + " of the " + std::to_string(size) +
                       " reply bytes for observation " + std::to_string(observation.observationIndex()));
      got += static_cast<size_t>(n);
    }
    if (Certainty) {
      CertaintyBytes = reply.substr(query.Advice.byteSize());
      reply.resize(query.Advice.byteSize());
    }
    return reply;
  }

  std::vector<TensorSpec> loggedOutputs() const override {
    if (!Certainty)
      return {};
    return {TensorSpec{"policy_certainty", ElementType::Double, {1}, 0}};
  }
  llvm::StringRef loggedOutputBytes() const override { return CertaintyBytes; }

  void abandonModule() override { stop(); }
  ~ExecPolicy() override { stop(); }

private:
  // Waits until `fd` is ready for `events`; past the deadline or on an
  // interrupt the policy is killed and the error says why.
  llvm::Error waitFor(int fd, short events, Deadline deadline, const std::function<std::string()> &late) {
    while (true) {
      if (interruptRequested())
        return failure("was stopped by an interrupt");
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return failure(late());
      struct pollfd p = {fd, events, 0};
      // Short slices: the interrupt flag is polled (a signal handler cannot wake us).
      int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
      if (ready > 0 || (ready < 0 && errno != EINTR))
        return llvm::Error::success(); // ready, or hung up: the next read or write says which
    }
  }

  llvm::Error send(const std::string &bytes, Deadline deadline) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(Process->stdinFd(), bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN) {
        if (llvm::Error e = waitFor(Process->stdinFd(), POLLOUT, deadline, [&] {
              return "stopped reading its input: " + std::to_string(bytes.size() - done) + " of " +
                     std::to_string(bytes.size()) + " bytes unread at the deadline";
            }))
          return e;
        continue;
      }
      if (n <= 0)
        return failure("stopped reading its input (" + std::string(std::strerror(errno)) + ")");
      done += static_cast<size_t>(n);
    }
    return llvm::Error::success();
  }

  llvm::Error failure(const std::string &what) {
    std::string status;
    if (Process) {
      if (auto exited = Process->poll())
        status = " (the policy process exited: " + exited->describe() + ")";
    }
    stop();
    std::string tail = fileTail(StderrPath, 500);
    return llvm::createStringError("exec policy '%s' %s%s%s%s", Command.c_str(), what.c_str(), status.c_str(),
                                   tail.empty() ? "" : "; its stderr ends: ", tail.c_str());
  }

  void stop() {
    if (Process) {
      Process->closeStdin();
      Process->killGroup();
      Process->wait();
      Process.reset();
    }
  }

  std::string Command, StderrPath;
  bool Certainty;
  std::string CertaintyBytes; // the last decision's, as the policy sent it
  std::optional<ChildProcess> Process;
};

} // namespace

std::unique_ptr<Policy> makeExecPolicy(std::string command, std::string stderrPath, bool certainty) {
  return std::make_unique<ExecPolicy>(std::move(command), std::move(stderrPath), certainty);
}

} // namespace mlgo
