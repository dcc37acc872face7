#include "RegAllocChannelTrace.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/CommandLine.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace mlgo {

ChannelTrace::ChannelTrace(std::string path, std::string channelOption)
    : Path(std::move(path)), ChannelOption(std::move(channelOption)) {}

ChannelTrace::~ChannelTrace() = default;

bool ChannelTrace::prepare(LLVMContext &ctx) {
  ChannelBase = Path + ".channel";
  for (const char *suffix : {".in", ".out"}) {
    std::string fifo = ChannelBase + suffix;
    ::unlink(fifo.c_str());
    if (::mkfifo(fifo.c_str(), 0600) != 0) {
      ctx.emitError("mlgo-regalloc: cannot create " + fifo + ": " + std::strerror(errno));
      return false;
    }
  }
  auto *channel = static_cast<cl::opt<std::string> *>(cl::getRegisteredOptions().lookup(ChannelOption));
  if (!channel) {
    ctx.emitError("mlgo-regalloc: this LLVM has no -" + ChannelOption);
    return false;
  }
  channel->setValue(ChannelBase);
  return true;
}

void ChannelTrace::startServer() {
  if (!Server.joinable())
    Server = std::thread([this] { serve(); });
}

void ChannelTrace::finish() {
  if (Server.joinable())
    Server.join();
  if (!ChannelBase.empty())
    for (const char *suffix : {".in", ".out"})
      ::unlink((ChannelBase + suffix).c_str());
  if (Log)
    Log->flush();
}

void ChannelTrace::reward(float score) {
  std::lock_guard<std::mutex> lock(Mutex);
  writeOutcome(score);
}

std::string ChannelTrace::serverError() {
  std::lock_guard<std::mutex> lock(Mutex);
  return ServerError;
}

void ChannelTrace::serve() {
  int inbound = ::open((ChannelBase + ".in").c_str(), O_WRONLY | O_CLOEXEC);
  int outbound = ::open((ChannelBase + ".out").c_str(), O_RDONLY | O_CLOEXEC);
  if (inbound < 0 || outbound < 0) {
    fail(std::string("cannot open the channel: ") + std::strerror(errno));
    if (inbound >= 0)
      ::close(inbound);
    if (outbound >= 0)
      ::close(outbound);
    return;
  }
  TrainingLogReader reader(outbound, ChannelBase + ".out", /*owned=*/true);
  while (true) {
    auto event = reader.next();
    if (!event) {
      fail(toString(event.takeError()));
      break;
    }
    if (*event == TrainingLogReader::Event::End)
      break;
    std::lock_guard<std::mutex> lock(Mutex);
    if (*event == TrainingLogReader::Event::Header) {
      if (Header || !reader.header().Advice) {
        ServerError = "unexpected channel header";
        break;
      }
      Header.emplace();
      Header->Features = reader.header().Features;
      std::vector<TensorSpec> extras = loggedOutputs();
      Header->Features.insert(Header->Features.end(), extras.begin(), extras.end());
      Header->Features.push_back(*reader.header().Advice); // the action column, as development mode logs it
      Header->Score = TensorSpec{"reward", ElementType::Float, {1}, 0};
      ServerError = checkHeader(reader);
      if (!ServerError.empty())
        break;
    } else if (*event == TrainingLogReader::Event::Context) {
      // A function comes back for each greedy run (x86: tile registers,
      // then the rest); its reward still goes on its very last observation.
      if (reader.context() != Context) {
        writeOutcome(0);
        Context = reader.context();
        if (Writer)
          Writer->switchContext(Context);
      }
    } else if (*event == TrainingLogReader::Event::Observation) {
      // The log is created at the first observation: a module without any
      // (no function bodies, llc -O0, no query) leaves no file.
      if (!Writer && Logging)
        Logging = openLog();
      writeOutcome(0);
      std::string error;
      std::string reply = decision(reader, error);
      // The first error is the one worth reporting (a policy's failure
      // leaves its extra outputs short, which the writer then refuses).
      if (!error.empty() && ServerError.empty())
        ServerError = error;
      // A failure to log fails the compile (reward pass) but never stops
      // the replies: LLVM waits for every one.
      if (Logging) {
        StringRef extras = loggedOutputBytes();
        if (Error e = extras.empty() ? Writer->observationRaw({reader.observation(), reply})
                                     : Writer->observationRaw({reader.observation(), extras, reply})) {
          if (ServerError.empty())
            ServerError = toString(std::move(e));
          else
            consumeError(std::move(e));
          Logging = false;
        }
      }
      OutcomePending = Logging;
      ++Answered;
      if (::write(inbound, reply.data(), reply.size()) != static_cast<ssize_t>(reply.size())) {
        ServerError = std::string("cannot reply on the channel: ") + std::strerror(errno);
        break;
      }
    } else {
      ServerError = "an outcome record on the interactive channel";
      break;
    }
  }
  ::close(inbound);
}

bool ChannelTrace::openLog() {
  std::error_code error;
  Log = std::make_unique<raw_fd_ostream>(Path, error);
  if (error) {
    ServerError = "cannot write " + Path + ": " + error.message();
    return false;
  }
  Writer = std::make_unique<TrainingLogWriter>(*Log, *Header);
  Writer->switchContext(Context);
  return true;
}

void ChannelTrace::writeOutcome(float score) {
  if (!OutcomePending || !Writer)
    return;
  OutcomePending = false;
  if (Error e = Writer->outcome(StringRef(reinterpret_cast<const char *>(&score), sizeof score)))
    ServerError = toString(std::move(e));
}

void ChannelTrace::fail(std::string message) {
  std::lock_guard<std::mutex> lock(Mutex);
  ServerError = std::move(message);
}

} // namespace mlgo
