// The pipe protocol between harvest-logs and mlgo-compile-server
// (docs/compile-server.md): the harvester sends one request per compile,
// the server forks a child that runs the tool in-process and answers with
// the child's pid, or the step at which it could not be set up. Every
// message is a list of strings, each a little-endian u32 length and bytes,
// preceded by the u32 count; lists are bounded so that a confused peer
// cannot make either side allocate without limit.
#pragma once

#include "mlgo/support/Landlock.h" // ReadExecRules

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::server {

/// Bumped whenever a message changes; the server's greeting carries it.
constexpr uint32_t ProtocolVersion = 3;
constexpr uint32_t MaxStrings = 1 << 16, MaxStringBytes = 1 << 20, MaxMessageBytes = 64 << 20;

/// One compile: `Tool` is "opt", "llc" or "clang"; Argv[0] is the program
/// the exec path would run (the tool sees it as its argv[0]).
struct CompileRequest {
  std::string Tool;
  std::vector<std::string> Argv;
  std::string StdoutPath = "/dev/null", StderrPath = "/dev/null";
  std::string WorkingDirectory;          // "" = the server's
  std::string ConfineWritesTo;           // "" = not confined
  std::vector<std::string> AlsoWritable; // with ConfineWritesTo
  std::optional<ReadExecRules> ReadExec; // with ConfineWritesTo: reads and executions confined too
  /// With Tool "opt": llc's argv for the optimized module, run in the same
  /// child on the module opt leaves in memory (OptLlcEntries.cpp) instead
  /// of a second child reading opt's output back.
  std::vector<std::string> CodegenArgv;
};

/// The answer: the child's pid (a child of the harvester, see
/// CompileServer.h), and when its setup failed, the step and errno (the
/// child has then exited with 127 and must still be reaped).
struct CompileReply {
  int64_t Pid = -1;
  int FailedStep = -1; // a SpawnStep (mlgo/support/ChildProcess.h); -1 = none
  int Errno = 0;
  std::string Message; // a failure of the server itself (e.g. unknown tool)
};

/// The empty file a child running CodegenArgv creates beside its object
/// (`objectPath`) when code generation begins: a failure after it is
/// codegen's, not opt's.
inline std::string codegenStartedMarker(const std::string &objectPath) { return objectPath + ".codegen-started"; }

std::vector<std::string> encodeRequest(const CompileRequest &request);
std::optional<CompileRequest> decodeRequest(const std::vector<std::string> &fields);
std::vector<std::string> encodeReply(const CompileReply &reply);
std::optional<CompileReply> decodeReply(const std::vector<std::string> &fields);

/// Writes one message; false when the pipe is closed or broken.
bool writeMessage(int fd, const std::vector<std::string> &strings);
/// Reads one message; nullopt on end of file, an error, or a message
/// beyond the bounds above.
std::optional<std::vector<std::string>> readMessage(int fd);

} // namespace mlgo::server
