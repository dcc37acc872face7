#include "mlgo/compile/InteractiveSession.h"

#include "mlgo/log/TrainingLog.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/Watchdog.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace mlgo {
namespace {

void setBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK); }

// Opens the write end of `.in` once the compiler opened its read end;
// -1 if the compiler exits (or is killed) first.
int openInbound(const std::string &path, ChildProcess &child, const Watch &watchdog) {
  auto pause = std::chrono::microseconds(50);
  while (true) {
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0)
      return fd; // left non-blocking: writeAll waits with a deadline
    if (errno != ENXIO && errno != EINTR)
      return -1;
    if (watchdog.fired() || child.exitedNoReap(false))
      return -1;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(500)); // opt starts in ~10 ms: poll finely
  }
}

// Opens `.out` and waits until the compiler has connected and written (or
// hung up); -1 if it exits or is killed first.
int openOutbound(const std::string &path, ChildProcess &child, const Watch &watchdog) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -1;
  while (true) {
    struct pollfd p = {fd, POLLIN, 0};
    int ready = ::poll(&p, 1, 20);
    if (ready > 0) {
      setBlocking(fd);
      return fd;
    }
    if (watchdog.fired() || child.exitedNoReap(false)) {
      ::close(fd);
      return -1;
    }
  }
}

// Writes to the non-blocking `fd` until done, the deadline, an interrupt,
// or the reader going away (false). Blocked writes are what a compiler that
// stops reading would otherwise turn into a hang.
bool writeAll(int fd, const char *data, size_t size, Deadline until) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || interruptRequested())
        return false;
      struct pollfd p = {fd, POLLOUT, 0};
      ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
      continue;
    }
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

CompileOutcome finish(ChildProcess &child, Watch &watchdog, CompileOutcome outcome, const CompileJob &job) {
  if (outcome.Result != CompileOutcome::Status::Ok && !watchdog.fired())
    child.killGroup(); // a protocol or policy failure: do not let it spin
  child.exitedNoReap(true);
  watchdog.disarm();
  outcome.Exit = child.wait();
  outcome.StderrTail = fileTail(job.StderrPath);
  if (watchdog.interrupted()) {
    outcome.Result = CompileOutcome::Status::Interrupted;
    outcome.Reason = "interrupted";
    outcome.Detail = "stopped by an interrupt";
  } else if (watchdog.timedOut()) {
    outcome.Result = CompileOutcome::Status::Timeout;
    outcome.Reason = "timeout";
    outcome.Detail = "killed after " + std::to_string(static_cast<int>(job.TimeoutSeconds)) +
                     " s (--compilation_timeout)" + (outcome.Detail.empty() ? "" : "; " + outcome.Detail);
  } else if (outcome.Result == CompileOutcome::Status::Ok && !outcome.Exit->ok()) {
    outcome.Result = CompileOutcome::Status::Failed;
    outcome.Reason = "compiler_failed";
    outcome.Detail = job.Argv[0] + " failed: " + outcome.Exit->describe();
  }
  // After an interrupt a failure is the interrupt's doing (a child that got
  // the signal, an aborted policy exchange): redone on resume, not recorded.
  if (outcome.Result != CompileOutcome::Status::Ok && interruptRequested()) {
    outcome.Result = CompileOutcome::Status::Interrupted;
    outcome.Reason = "interrupted";
    outcome.Detail = "stopped by an interrupt";
  }
  return outcome;
}

} // namespace

const char *statusName(CompileOutcome::Status status) {
  switch (status) {
  case CompileOutcome::Status::Ok:
    return "ok";
  case CompileOutcome::Status::Failed:
    return "failed";
  case CompileOutcome::Status::Timeout:
    return "timeout";
  case CompileOutcome::Status::Interrupted:
    return "interrupted";
  }
  return "failed";
}

ChannelHeaderCheck checkChannelHeader(const LogHeader &header, Problem problem) {
  ChannelHeaderCheck check;
  auto refuse = [&](const char *reason, std::string detail) {
    check.Reason = reason;
    check.Detail = std::move(detail);
    return check;
  };
  if (!header.Advice || header.Advice->Name != decisionName(problem))
    return refuse("protocol_error", std::string("the channel's header does not ask for ") + decisionName(problem) +
                                        " decisions (advice: " + (header.Advice ? header.Advice->Name : "none") + ")");
  // The reply is one decision: its first element is read (the eviction
  // column checked against the mask) and it is all the compiler reads back.
  if (header.Advice->elementCount() != 1)
    return refuse("protocol_error", "the channel's advice " + header.Advice->Name + " has " +
                                        std::to_string(header.Advice->elementCount()) + " elements, not one");
  if (problem == Problem::Inliner) {
    std::optional<size_t> slot = header.find("inlining_default");
    if (!slot || *slot + 1 != header.Features.size())
      return refuse("no_default_decision", "the compiler's header has no trailing inlining_default feature; it needs "
                                           "-inliner-interactive-include-default (LLVM 21 or later)");
    // Its first element is read from each observation.
    if (header.Features[*slot].elementCount() != 1)
      return refuse("protocol_error", "the compiler's inlining_default feature has " +
                                          std::to_string(header.Features[*slot].elementCount()) + " elements, not one");
    check.DefaultIndex = slot;
  }
  if (problem == Problem::RegallocEvict) {
    check.MaskIndex = header.find("mask");
    if (!check.MaskIndex || header.Features[*check.MaskIndex].elementCount() != EvictionColumns) {
      check.MaskIndex.reset();
      return refuse("protocol_error", "the eviction header has no 33-column mask feature");
    }
  }
  return check;
}

static SpawnOptions compileSpawnOptions(const CompileJob &job) {
  SpawnOptions options{job.Argv, "/dev/null", job.StderrPath};
  options.ConfineWritesTo = job.WorkDir;
  options.AlsoWritable = job.AlsoWritable;
  options.ReadExec = job.ReadExec;
  options.MemoryLimitBytes = job.MemoryLimitBytes;
  return options;
}

// Exec'd, or forked warm by the compile server.
static llvm::Expected<ChildProcess> startCompile(const CompileJob &job) {
  if (job.Server && !job.Tool.empty())
    return job.Server->spawn(job.Tool, compileSpawnOptions(job), job.Codegen);
  return ChildProcess::spawn(compileSpawnOptions(job));
}

// A compile that could not start: spawn_failed, or compile_server_failed
// when the server itself failed (not the compile's doing).
static void notStarted(CompileOutcome &outcome, llvm::Error error) {
  outcome.Result = CompileOutcome::Status::Failed;
  outcome.Reason = error.isA<CompileServerError>() ? "compile_server_failed" : "spawn_failed";
  outcome.Detail = llvm::toString(std::move(error));
}

CompileOutcome runCompile(const CompileJob &job) {
  auto child = startCompile(job);
  if (!child) {
    CompileOutcome outcome;
    notStarted(outcome, child.takeError());
    return outcome;
  }
  Watch watchdog(*child, job.Until);
  return finish(*child, watchdog, CompileOutcome{}, job);
}

CompileOutcome runInteractive(const CompileJob &job, const std::string &channelBase, Problem problem, Policy &policy,
                              llvm::raw_ostream &log) {
  CompileOutcome outcome;
  auto fail = [&](const char *reason, std::string detail) {
    outcome.Result = CompileOutcome::Status::Failed;
    outcome.Reason = reason;
    outcome.Detail = std::move(detail);
  };
  std::string in = channelBase + ".in", out = channelBase + ".out";
  for (const std::string &fifo : {in, out}) {
    ::unlink(fifo.c_str());
    if (::mkfifo(fifo.c_str(), 0600) != 0) {
      fail("channel_failed", "mkfifo " + fifo + ": " + std::strerror(errno));
      return outcome;
    }
  }
  auto child = startCompile(job);
  if (!child) {
    notStarted(outcome, child.takeError());
    return outcome;
  }
  Watch watchdog(*child, job.Until);

  std::unique_ptr<TrainingLogWriter> writer;
  std::string firstHeader, currentContext;
  size_t extraAt = 0; // the feature index before which the policy's extra outputs are logged
  bool contextWritten = false;
  // Every stream starts with the compiler opening .in, then .out.
  while (outcome.Result == CompileOutcome::Status::Ok) {
    int inFd = openInbound(in, *child, watchdog);
    if (inFd < 0)
      break; // the compiler finished (or was killed) without opening another stream
    int outFd = openOutbound(out, *child, watchdog);
    if (outFd < 0) {
      ::close(inFd);
      if (!watchdog.fired())
        fail("protocol_error", "the compiler opened " + in + " but never opened " + out);
      break;
    }
    TrainingLogReader reader(outFd, out, /*owned=*/true);
    ++outcome.Streams;
    std::optional<size_t> defaultIndex, maskIndex;
    bool sawHeader = false;
    while (outcome.Result == CompileOutcome::Status::Ok) {
      auto event = reader.next();
      if (!event) {
        if (!watchdog.fired())
          fail("protocol_error", "bad stream from the compiler: " + llvm::toString(event.takeError()));
        else
          llvm::consumeError(event.takeError());
        break;
      }
      if (*event == TrainingLogReader::Event::End)
        break;
      const LogHeader &header = reader.header();
      if (*event == TrainingLogReader::Event::Header) {
        sawHeader = true;
        ChannelHeaderCheck check = checkChannelHeader(header, problem);
        if (check.Reason) {
          fail(check.Reason, std::move(check.Detail));
          break;
        }
        defaultIndex = check.DefaultIndex;
        maskIndex = check.MaskIndex;
        if (!writer) {
          firstHeader = header.toLine();
          LogHeader logHeader;
          logHeader.Features = header.Features;
          // A model's extra outputs go where development mode logs them: after
          // the features, before inlining_default and the decision.
          std::vector<TensorSpec> extras = policy.loggedOutputs();
          extraAt = defaultIndex ? *defaultIndex : header.Features.size();
          logHeader.Features.insert(logHeader.Features.begin() + static_cast<ptrdiff_t>(extraAt), extras.begin(),
                                    extras.end());
          logHeader.Features.push_back(*header.Advice); // the decision taken, as development mode logs it
          writer = std::make_unique<TrainingLogWriter>(log, std::move(logHeader));
        } else if (header.toLine() != firstHeader) {
          fail("protocol_error", "stream " + std::to_string(outcome.Streams) + " has a different header");
          break;
        }
        if (llvm::Error e = policy.beginStream(header, job.Until)) {
          fail("policy_error", llvm::toString(std::move(e)));
          break;
        }
      } else if (*event == TrainingLogReader::Event::Context) {
        if (!contextWritten || reader.context() != currentContext) {
          writer->switchContext(reader.context());
          currentContext = reader.context();
          contextWritten = true;
        }
        if (llvm::Error e = policy.context(reader.context(), job.Until)) {
          fail("policy_error", llvm::toString(std::move(e)));
          break;
        }
      } else if (*event == TrainingLogReader::Event::Observation) {
        std::optional<int64_t> defaultDecision;
        if (defaultIndex)
          defaultDecision = header.Features[*defaultIndex].elementAsInt(reader.feature(*defaultIndex), 0);
        Query query{reader, *header.Advice, defaultDecision, maskIndex};
        auto reply = policy.decide(query, job.Until);
        if (!reply) {
          fail("policy_error", llvm::toString(reply.takeError()));
          break;
        }
        if (reply->size() != header.Advice->byteSize()) {
          fail("policy_error", "the policy's reply has " + std::to_string(reply->size()) + " bytes, not " +
                                   std::to_string(header.Advice->byteSize()));
          break;
        }
        if (maskIndex) {
          // An index the mask forbids crashes or misleads the compiler: never send it.
          int64_t column = header.Advice->elementAsInt(*reply, 0);
          std::vector<int64_t> valid = validEvictionColumns(query);
          if (std::find(valid.begin(), valid.end(), column) == valid.end()) {
            std::string allowed;
            for (int64_t v : valid)
              allowed += (allowed.empty() ? "" : ",") + std::to_string(v);
            fail("policy_error", "the policy chose eviction column " + std::to_string(column) + " for observation " +
                                     std::to_string(reader.observationIndex()) + " of " + reader.context() +
                                     ", which the mask forbids (allowed: " + allowed + ")");
            break;
          }
        }
        if (!writeAll(inFd, reply->data(), reply->size(), job.Until)) {
          if (!watchdog.fired())
            fail("compiler_failed", "the compiler stopped reading its replies");
          break;
        }
        llvm::StringRef features = reader.observation();
        size_t split = 0;
        for (size_t i = 0; i < extraAt; ++i)
          split += header.Features[i].byteSize();
        llvm::StringRef extras = policy.loggedOutputBytes();
        llvm::Error written =
            extras.empty()
                ? writer->observationRaw({features, *reply})
                : writer->observationRaw({features.take_front(split), extras, features.drop_front(split), *reply});
        if (llvm::Error e = std::move(written)) {
          fail("protocol_error", llvm::toString(std::move(e)));
          break;
        }
        ++outcome.Decisions;
      } else {
        fail("protocol_error", "the compiler sent an outcome record on an interactive channel");
        break;
      }
    }
    ::close(inFd); // the reader closes .out
    if (!sawHeader && outcome.Result == CompileOutcome::Status::Ok && !watchdog.fired())
      fail("protocol_error", "the compiler closed " + out + " before sending a header");
  }
  ::unlink(in.c_str());
  ::unlink(out.c_str());
  log.flush();
  return finish(*child, watchdog, std::move(outcome), job);
}

} // namespace mlgo
