#include "mlgo/server/CompileServerProtocol.h"
#include "mlgo/support/FileDescriptorIo.h"

#include <cerrno>
#include <limits>
#include <sys/types.h>
#include <unistd.h>

namespace mlgo::server {
namespace {

void putU32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool getU32(int fd, uint32_t &v) {
  unsigned char bytes[4];
  if (!readAll(fd, reinterpret_cast<char *>(bytes), 4))
    return false;
  v = bytes[0] | bytes[1] << 8 | bytes[2] << 16 | static_cast<uint32_t>(bytes[3]) << 24;
  return true;
}

std::optional<int64_t> parseInt(const std::string &text) {
  if (text.empty() || text.size() > 20)
    return std::nullopt;
  size_t used = 0;
  try {
    long long v = std::stoll(text, &used);
    if (used != text.size())
      return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

} // namespace

bool writeMessage(int fd, const std::vector<std::string> &strings) {
  std::string out;
  putU32(out, static_cast<uint32_t>(strings.size()));
  for (const std::string &s : strings) {
    putU32(out, static_cast<uint32_t>(s.size()));
    out += s;
  }
  return writeAll(fd, out.data(), out.size()); // one write: small messages go whole
}

std::optional<std::vector<std::string>> readMessage(int fd) {
  uint32_t count;
  if (!getU32(fd, count) || count > MaxStrings)
    return std::nullopt;
  std::vector<std::string> strings;
  size_t total = 0;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t size;
    if (!getU32(fd, size) || size > MaxStringBytes || (total += size) > MaxMessageBytes)
      return std::nullopt;
    std::string s(size, '\0');
    if (!readAll(fd, s.data(), size))
      return std::nullopt;
    strings.push_back(std::move(s));
  }
  return strings;
}

// [tool, stdout, stderr, cwd, confine, #argv, #codegen, #readable ("-": reads
// and executions not confined), #executable, argv..., codegen...,
// readable..., executable..., writable...]
std::vector<std::string> encodeRequest(const CompileRequest &r) {
  std::vector<std::string> f = {r.Tool,
                                r.StdoutPath,
                                r.StderrPath,
                                r.WorkingDirectory,
                                r.ConfineWritesTo,
                                std::to_string(r.Argv.size()),
                                std::to_string(r.CodegenArgv.size()),
                                r.ReadExec ? std::to_string(r.ReadExec->Readable.size()) : "-",
                                r.ReadExec ? std::to_string(r.ReadExec->Executable.size()) : "0"};
  f.insert(f.end(), r.Argv.begin(), r.Argv.end());
  f.insert(f.end(), r.CodegenArgv.begin(), r.CodegenArgv.end());
  if (r.ReadExec) {
    f.insert(f.end(), r.ReadExec->Readable.begin(), r.ReadExec->Readable.end());
    f.insert(f.end(), r.ReadExec->Executable.begin(), r.ReadExec->Executable.end());
  }
  f.insert(f.end(), r.AlsoWritable.begin(), r.AlsoWritable.end());
  return f;
}

std::optional<CompileRequest> decodeRequest(const std::vector<std::string> &f) {
  constexpr size_t Head = 9;
  if (f.size() < Head)
    return std::nullopt;
  bool readExec = f[7] != "-";
  auto argc = parseInt(f[5]), codegenArgc = parseInt(f[6]),
       readable = readExec ? parseInt(f[7]) : std::optional<int64_t>(0), executable = parseInt(f[8]);
  if (!argc || *argc < 1 || !codegenArgc || *codegenArgc < 0 || !readable || *readable < 0 || !executable ||
      *executable < 0 || (!readExec && *executable != 0))
    return std::nullopt;
  // Each count within what is left after the ones before it.
  size_t left = f.size() - Head;
  for (long long count : {*argc, *codegenArgc, *readable, *executable}) {
    if (static_cast<size_t>(count) > left)
      return std::nullopt;
    left -= static_cast<size_t>(count);
  }
  CompileRequest r;
  r.Tool = f[0];
  r.StdoutPath = f[1];
  r.StderrPath = f[2];
  r.WorkingDirectory = f[3];
  r.ConfineWritesTo = f[4];
  auto argvBegin = f.begin() + Head, codegenBegin = argvBegin + *argc, readableBegin = codegenBegin + *codegenArgc,
       executableBegin = readableBegin + *readable, writableBegin = executableBegin + *executable;
  r.Argv.assign(argvBegin, codegenBegin);
  r.CodegenArgv.assign(codegenBegin, readableBegin);
  if (readExec)
    r.ReadExec = ReadExecRules{{readableBegin, executableBegin}, {executableBegin, writableBegin}};
  r.AlsoWritable.assign(writableBegin, f.end());
  return r;
}

std::vector<std::string> encodeReply(const CompileReply &r) {
  return {std::to_string(r.Pid), std::to_string(r.FailedStep), std::to_string(r.Errno), r.Message};
}

std::optional<CompileReply> decodeReply(const std::vector<std::string> &f) {
  if (f.size() != 4)
    return std::nullopt;
  auto pid = parseInt(f[0]), step = parseInt(f[1]), err = parseInt(f[2]);
  // The client adopts the pid as a pid_t and may kill its group: -1 (no
  // child) or a pid that fits, never 1 or one a cast turns into another
  // (2^32+1 into 1, whose group kill(-1) is every process we may signal).
  bool pidFits = pid && (*pid == -1 || (*pid > 1 && *pid <= std::numeric_limits<pid_t>::max()));
  if (!pidFits || !step || !err || *step < -1 || *step > 64 || *err < 0 || *err > 4095)
    return std::nullopt;
  return CompileReply{*pid, static_cast<int>(*step), static_cast<int>(*err), f[3]};
}

} // namespace mlgo::server
