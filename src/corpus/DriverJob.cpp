#include "mlgo/corpus/DriverJob.h"

#include "mlgo/support/ChildProcess.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/ToolAccess.h"
#include "mlgo/support/Watchdog.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace mlgo {
namespace {

// How long the driver may take to plan: it reads a few directories.
constexpr std::chrono::seconds PlanTimeout(30);

// One job line of `clang -###`: its arguments, each in double quotes with
// '"', '\' and '$' escaped by a backslash (llvm::sys::printArg).
std::optional<std::vector<std::string>> parseJobLine(llvm::StringRef line) {
  std::vector<std::string> args;
  size_t i = 0;
  while (true) {
    while (i < line.size() && line[i] == ' ')
      ++i;
    if (i == line.size())
      return args;
    if (line[i] != '"')
      return std::nullopt;
    std::string arg;
    for (++i;; ++i) {
      if (i == line.size())
        return std::nullopt;
      if (line[i] == '\\' && i + 1 < line.size()) {
        arg += line[++i];
        continue;
      }
      if (line[i] == '"')
        break;
      arg += line[i];
    }
    ++i;
    args.push_back(std::move(arg));
  }
}

std::string firstErrorLine(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (line.contains("error:"))
      return line.trim().str();
  return text.trim().take_back(300).str();
}

} // namespace

llvm::Expected<std::vector<std::string>> cc1LineOfDriverLine(llvm::ArrayRef<std::string> args,
                                                             llvm::StringRef clangPath, llvm::StringRef input) {
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("mlgo-plan", dir))
    return llvm::createStringError(ec, "cannot create a temporary directory: %s", ec.message().c_str());
  auto cleanup = llvm::make_scope_exit([&] { llvm::sys::fs::remove_directories(dir); });
  // clang's own driver plans the compile and prints its jobs (-###) without
  // running them, in a child: whatever the planning does with the corpus'
  // flags (it can run an offload-arch tool) happens there, confined, and a
  // crash costs that child.
  // The driver checks that its input exists: an empty stand-in of the same
  // name (the name is what cc1's -main-file-name takes).
  std::string inputText = joinPath(dir, llvm::sys::path::filename(input)), output = joinPath(dir, "planned.o");
  {
    std::error_code ec;
    llvm::raw_fd_ostream standIn(inputText, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write %s: %s", inputText.c_str(), ec.message().c_str());
  }
  SpawnOptions spawn;
  spawn.Argv = {clangPath.str()};
  spawn.Argv.insert(spawn.Argv.end(), args.begin(), args.end());
  spawn.Argv.insert(spawn.Argv.end(), {"-c", "-x", "ir", inputText, "-o", output, "-###"});
  spawn.StdoutPath = joinPath(dir, "jobs.out");
  spawn.StderrPath = joinPath(dir, "jobs.err");
  spawn.ConfineWritesTo = dir.str().str();
  spawn.ReadExec = toolReadExecRules(clangPath.str()); // as a compile: its toolchain and the system's libraries
  auto child = ChildProcess::spawn(spawn);
  if (!child)
    return child.takeError();
  ExitStatus status;
  {
    Watch watch(*child, std::chrono::steady_clock::now() + PlanTimeout);
    child->exitedNoReap(/*block=*/true);
    watch.disarm();
    if (watch.timedOut())
      return llvm::createStringError("clang-22's driver did not plan the line within %lld s",
                                     static_cast<long long>(PlanTimeout.count()));
    status = child->wait();
  }
  std::string printed = fileTail(spawn.StderrPath, 1 << 20);
  if (!status.ok())
    return llvm::createStringError("clang-22's driver refuses the line (%s): %s", status.describe().c_str(),
                                   firstErrorLine(printed).c_str());
  std::vector<std::vector<std::string>> jobs;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(printed).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.starts_with(" \""))
      continue;
    auto job = parseJobLine(line);
    if (!job)
      return llvm::createStringError("cannot read the driver's plan: %s", line.take_front(200).str().c_str());
    jobs.push_back(std::move(*job));
  }
  if (jobs.size() != 1)
    return llvm::createStringError("the driver line makes %zu jobs; harvest-logs runs only a line that is one "
                                   "compile (cc1) job",
                                   jobs.size());
  const std::vector<std::string> &job = jobs.front();
  bool cc1 = job.size() > 1 && job[1] == "-cc1";
  bool emitsObject = std::find(job.begin(), job.end(), "-emit-obj") != job.end();
  if (!cc1 || !emitsObject)
    return llvm::createStringError("the driver line runs %s, not one clang compile that emits an object",
                                   llvm::join(llvm::ArrayRef(job).take_front(3), " ").c_str());
  // The input and output are harvest-logs' own, added after the advisor's flags.
  std::vector<std::string> line;
  for (size_t i = 1; i < job.size(); ++i) {
    const std::string &arg = job[i];
    if (arg == "-o" && i + 1 < job.size() && job[i + 1] == output) {
      ++i;
      continue;
    }
    if (arg == "-x" && i + 2 < job.size() && job[i + 2] == inputText) {
      i += 2;
      continue;
    }
    if (arg == inputText)
      continue;
    line.push_back(arg);
  }
  return line;
}

} // namespace mlgo
