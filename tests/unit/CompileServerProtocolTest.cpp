// The compile server's pipe protocol: requests and replies round-trip, and a
// peer that sends more than the bounds or a malformed message is refused
// instead of making the reader allocate or misread.
#include "mlgo/server/CompileServerProtocol.h"

#include <gtest/gtest.h>

#include <cstring>
#include <unistd.h>

using namespace mlgo::server;

namespace {

struct Pipe {
  int Fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe(Fds), 0); }
  ~Pipe() {
    for (int fd : Fds)
      if (fd >= 0)
        ::close(fd);
  }
  void closeWriter() {
    ::close(Fds[1]);
    Fds[1] = -1;
  }
  void writeRaw(const std::string &bytes) {
    ASSERT_EQ(::write(Fds[1], bytes.data(), bytes.size()), ssize_t(bytes.size()));
  }
};

std::string u32(uint32_t v) { return std::string(reinterpret_cast<const char *>(&v), 4); } // x86: little-endian

TEST(CompileServerProtocol, RequestsAndRepliesRoundTripThroughAPipe) {
  CompileRequest request;
  request.Tool = "llc";
  request.Argv = {"llc-22", "-O2", "-filetype=obj", "in put.bc", "-o", std::string("with\0nul", 8)};
  request.StdoutPath = "/dev/null";
  request.StderrPath = "/w/codegen.stderr";
  request.WorkingDirectory = "/w";
  request.ConfineWritesTo = "/w";
  request.AlsoWritable = {"/cache", ""};
  request.CodegenArgv = {"llc-22", "-O2", "-filetype=obj", "o.bc", "-o", "n.o"};
  request.ReadExec = mlgo::ReadExecRules{{"/corpus/m.bc", "/usr/lib"}, {"/usr/lib/llvm-22"}};
  Pipe pipe;
  ASSERT_TRUE(writeMessage(pipe.Fds[1], encodeRequest(request)));
  auto message = readMessage(pipe.Fds[0]);
  ASSERT_TRUE(message);
  auto back = decodeRequest(*message);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->Tool, request.Tool);
  EXPECT_EQ(back->Argv, request.Argv);
  EXPECT_EQ(back->StderrPath, request.StderrPath);
  EXPECT_EQ(back->WorkingDirectory, request.WorkingDirectory);
  EXPECT_EQ(back->ConfineWritesTo, request.ConfineWritesTo);
  EXPECT_EQ(back->AlsoWritable, request.AlsoWritable);
  EXPECT_EQ(back->CodegenArgv, request.CodegenArgv);
  ASSERT_TRUE(back->ReadExec);
  EXPECT_EQ(back->ReadExec->Readable, request.ReadExec->Readable);
  EXPECT_EQ(back->ReadExec->Executable, request.ReadExec->Executable);
  request.ReadExec.reset(); // reads not confined: said so, not an empty list
  auto unconfined = decodeRequest(encodeRequest(request));
  ASSERT_TRUE(unconfined);
  EXPECT_FALSE(unconfined->ReadExec);
  EXPECT_EQ(unconfined->AlsoWritable, request.AlsoWritable);

  CompileReply reply{4242, 3, 13, "message"};
  ASSERT_TRUE(writeMessage(pipe.Fds[1], encodeReply(reply)));
  auto replyMessage = readMessage(pipe.Fds[0]);
  ASSERT_TRUE(replyMessage);
  auto decoded = decodeReply(*replyMessage);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->Pid, 4242);
  EXPECT_EQ(decoded->FailedStep, 3);
  EXPECT_EQ(decoded->Errno, 13);
  EXPECT_EQ(decoded->Message, "message");
}

TEST(CompileServerProtocol, OversizedOrTruncatedMessagesAreRefused) {
  {
    Pipe pipe; // more strings than allowed: refused before any is read
    pipe.writeRaw(u32(MaxStrings + 1));
    EXPECT_FALSE(readMessage(pipe.Fds[0]));
  }
  {
    Pipe pipe; // one string longer than allowed: refused before allocating it
    pipe.writeRaw(u32(1) + u32(MaxStringBytes + 1));
    EXPECT_FALSE(readMessage(pipe.Fds[0]));
  }
  {
    Pipe pipe; // a string cut short by the end of the stream
    pipe.writeRaw(u32(1) + u32(10) + "abc");
    pipe.closeWriter();
    EXPECT_FALSE(readMessage(pipe.Fds[0]));
  }
  {
    Pipe pipe; // end of file between messages
    pipe.closeWriter();
    EXPECT_FALSE(readMessage(pipe.Fds[0]));
  }
}

TEST(CompileServerProtocol, MalformedFieldsAreRefused) {
  EXPECT_FALSE(decodeRequest({"opt", "", "", "", "", "1"}));                // too few fields
  EXPECT_FALSE(decodeRequest({"opt", "", "", "", "", "0", "0", "-", "0"})); // no argv
  EXPECT_FALSE(
      decodeRequest({"opt", "", "", "", "", "3", "0", "-", "0", "opt-22", "x"}));      // argv count beyond the fields
  EXPECT_FALSE(decodeRequest({"opt", "", "", "", "", "-1", "0", "-", "0", "opt-22"})); // negative count
  EXPECT_FALSE(decodeRequest({"opt", "", "", "", "", "1x", "0", "-", "0", "opt-22"})); // not a number
  EXPECT_FALSE(
      decodeRequest({"opt", "", "", "", "", "1", "2", "-", "0", "opt-22", "llc-22"})); // codegen argv beyond the fields
  EXPECT_FALSE(decodeRequest({"opt", "", "", "", "", "1", "-1", "-", "0", "opt-22"})); // negative codegen count
  EXPECT_TRUE(decodeRequest({"opt", "", "", "", "", "1", "0", "-", "0", "opt-22"}));
  auto both = decodeRequest({"opt", "", "", "", "", "1", "1", "-", "0", "opt-22", "llc-22", "/w"});
  ASSERT_TRUE(both);
  EXPECT_EQ(both->Argv, std::vector<std::string>{"opt-22"});
  EXPECT_EQ(both->CodegenArgv, std::vector<std::string>{"llc-22"});
  EXPECT_EQ(both->AlsoWritable, std::vector<std::string>{"/w"});
  EXPECT_FALSE(both->ReadExec);
  EXPECT_FALSE(
      decodeRequest({"opt", "", "", "", "", "1", "0", "2", "0", "opt-22", "/r"})); // readable beyond the fields
  EXPECT_FALSE(decodeRequest({"opt", "", "", "", "", "1", "0", "-", "1", "opt-22", "/x"})); // executable, reads free
  auto confined = decodeRequest({"opt", "", "", "", "", "1", "0", "1", "1", "opt-22", "/r", "/x", "/w"});
  ASSERT_TRUE(confined && confined->ReadExec);
  EXPECT_EQ(confined->ReadExec->Readable, std::vector<std::string>{"/r"});
  EXPECT_EQ(confined->ReadExec->Executable, std::vector<std::string>{"/x"});
  EXPECT_EQ(confined->AlsoWritable, std::vector<std::string>{"/w"});
  EXPECT_FALSE(decodeReply({"2", "-1", "0"}));                           // too few fields
  EXPECT_FALSE(decodeReply({"2", "-2", "0", ""}));                       // no such step
  EXPECT_FALSE(decodeReply({"2", "-1", "99999", ""}));                   // no such errno
  EXPECT_FALSE(decodeReply({"99999999999999999999999", "-1", "0", ""})); // out of range
  EXPECT_TRUE(decodeReply({"2", "-1", "0", ""}));
  EXPECT_TRUE(decodeReply({"-1", "-1", "0", "unknown tool"}));
  // A pid the client could not adopt as a pid_t unchanged: 2^32+1 would be
  // pid 1, and killing its group kill(-1) (fuzz/regressions/compile_server_protocol).
  EXPECT_FALSE(decodeReply({"4294967297", "-1", "0", ""}));
  EXPECT_FALSE(decodeReply({"2147483648", "-1", "0", ""}));
  EXPECT_FALSE(decodeReply({"-2", "-1", "0", ""}));
  EXPECT_FALSE(decodeReply({"0", "-1", "0", ""}));
  EXPECT_FALSE(decodeReply({"1", "-1", "0", ""})) << "init's group is kill(-1)";
}

} // namespace
