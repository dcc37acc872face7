// The compile server's pipe protocol as each side reads the other: the
// client (harvest-logs, CompileServerClient) reads the server's greeting and
// replies with readMessage and decodeReply; the server reads requests with
// readMessage and decodeRequest. The input is the byte stream of the pipe
// (here a file), read message by message until readMessage refuses.
// Contract: any bytes give messages or the end, never a crash, an exception
// or an allocation beyond the protocol's bounds; a decoded reply's pid is
// one the client can adopt as a pid_t unchanged (-1 or a pid above 1), its
// step and errno in range; a decoded request or reply encodes and decodes
// back equal; a message written with writeMessage reads back equal.
#include "FuzzSupport.h"

#include "mlgo/server/CompileServerProtocol.h"

#include <climits>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

namespace {

using mlgo::server::CompileReply;
using mlgo::server::CompileRequest;

bool sameRequest(const CompileRequest &a, const CompileRequest &b) {
  auto rules = [](const std::optional<mlgo::ReadExecRules> &r) {
    return r ? std::make_pair(r->Readable, r->Executable)
             : std::make_pair(std::vector<std::string>{"<none>"}, std::vector<std::string>{});
  };
  return a.Tool == b.Tool && a.Argv == b.Argv && a.StdoutPath == b.StdoutPath && a.StderrPath == b.StderrPath &&
         a.WorkingDirectory == b.WorkingDirectory && a.ConfineWritesTo == b.ConfineWritesTo &&
         a.AlsoWritable == b.AlsoWritable && a.ReadExec.has_value() == b.ReadExec.has_value() &&
         rules(a.ReadExec) == rules(b.ReadExec) && a.CodegenArgv == b.CodegenArgv;
}

std::optional<std::vector<std::string>> throughFile(const std::vector<std::string> &message) {
  std::string path = mlgo::fuzz::scratchDir() + "/again.msg";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FUZZ_CHECK(fd >= 0, "cannot open " + path);
  FUZZ_CHECK(mlgo::server::writeMessage(fd, message), "writeMessage failed on a file");
  ::lseek(fd, 0, SEEK_SET);
  auto read = mlgo::server::readMessage(fd);
  ::close(fd);
  return read;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("pipe.bytes", data, size);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  FUZZ_CHECK(fd >= 0, "cannot open " + path);
  size_t messages = 0;
  while (auto message = mlgo::server::readMessage(fd)) {
    ++messages;
    FUZZ_CHECK(message->size() <= mlgo::server::MaxStrings, "a message beyond MaxStrings");
    size_t total = 0;
    for (const std::string &s : *message) {
      FUZZ_CHECK(s.size() <= mlgo::server::MaxStringBytes, "a string beyond MaxStringBytes");
      total += s.size();
    }
    FUZZ_CHECK(total <= mlgo::server::MaxMessageBytes, "a message beyond MaxMessageBytes");
    // Each message's bytes are at least its length words: no message from nothing.
    FUZZ_CHECK(messages <= size / 4, "more messages than the bytes hold");

    auto again = throughFile(*message);
    FUZZ_CHECK(again && *again == *message, "a message written back does not read back equal");

    if (std::optional<CompileReply> reply = mlgo::server::decodeReply(*message)) {
      FUZZ_CHECK(reply->Pid == -1 ||
                     (reply->Pid > 1 && reply->Pid <= INT_MAX && static_cast<pid_t>(reply->Pid) == reply->Pid),
                 "a reply whose pid " + std::to_string(reply->Pid) + " the client cannot adopt as is");
      FUZZ_CHECK(reply->FailedStep >= -1 && reply->Errno >= 0, "a reply with a negative step or errno");
      auto back = mlgo::server::decodeReply(mlgo::server::encodeReply(*reply));
      FUZZ_CHECK(back && back->Pid == reply->Pid && back->FailedStep == reply->FailedStep &&
                     back->Errno == reply->Errno && back->Message == reply->Message,
                 "a reply encoded again decodes to another");
    }
    if (std::optional<CompileRequest> request = mlgo::server::decodeRequest(*message)) {
      FUZZ_CHECK(!request->Argv.empty(), "a request without argv");
      auto back = mlgo::server::decodeRequest(mlgo::server::encodeRequest(*request));
      FUZZ_CHECK(back && sameRequest(*back, *request), "a request encoded again decodes to another");
    }
  }
  ::close(fd);
  return 0;
}
