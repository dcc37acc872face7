#include "mlgo/explore/ForkChains.h"

#include "mlgo/evaluate/NativeSize.h"
#include "mlgo/harvest/HarvestTrajectories.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/FileDescriptorIo.h"
#include "mlgo/support/LineCount.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SHA256.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace mlgo {
namespace {

// A hard link at `to` of the file open as `fd`: through /proc/self/fd, or,
// where no /proc is mounted, AT_EMPTY_PATH (which needs CAP_DAC_READ_SEARCH).
bool linkDescriptor(int fd, const std::string &to) {
  std::string viaProc = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, viaProc.c_str(), AT_FDCWD, to.c_str(), AT_SYMLINK_FOLLOW) == 0)
    return true;
  int error = errno;
  if (error != ENOENT || ::access("/proc/self/fd", F_OK) == 0) {
    errno = error; // the link's own failure, whatever access() set
    return false;
  }
  return ::linkat(fd, "", AT_FDCWD, to.c_str(), AT_EMPTY_PATH) == 0; // else the fallback's own errno
}

} // namespace

std::string exploreChainName(const std::string &module) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(module));
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest).take_front(16), /*LowerCase=*/true);
}

bool ChainForking::changeCompile(CompileJob &job, const std::string &work) const {
  std::string chain = chainDirectory(work);
  if (chain.empty())
    return false;
  // Every checkpoint shares opt's output file: its bitcode goes to
  // /dev/null (stdout), as llc reads the module in memory.
  for (size_t i = 0; i + 1 < job.Argv.size(); ++i)
    if (job.Argv[i] == "-o")
      job.Argv[i + 1] = "-";
  char timeout[32];
  std::snprintf(timeout, sizeof(timeout), "%.17g", S.TimeoutSeconds);
  job.Argv.push_back("-mlgo-inliner-explore=" + std::to_string(S.Trajectories) + ":" + S.Order + ":" + timeout + ":" +
                     chain);
  // Each trajectory's own compile has the timeout (its parent enforces it).
  job.Until = std::chrono::steady_clock::now() +
              std::chrono::milliseconds(static_cast<int64_t>(S.TimeoutSeconds * 1000 * (S.Trajectories + 1)));
  return true;
}

// A forking base compile runs past its own timeout (its chain follows);
// one whose own compile took longer ends as the timeout would end it.
void ChainForking::changedCompileEnded(CompileOutcome &outcome, const std::string &work) const {
  if (outcome.Result == CompileOutcome::Status::Failed &&
      llvm::sys::fs::exists(joinPath(chainDirectory(work), "base-overran"))) {
    outcome.Result = CompileOutcome::Status::Timeout;
    outcome.Reason = "timeout";
    outcome.Detail =
        "killed after " + std::to_string(static_cast<int>(S.TimeoutSeconds)) + " s (--compilation_timeout)";
  }
}

// Where a base compile's fork chain writes ("" : no chain). Not with
// --explicit_temps_dir: the chains are moved into OUT afterwards.
std::string ChainForking::chainDirectory(const std::string &work) const {
  if (!S.Trajectories || S.ExplicitTemps)
    return "";
  return joinPath(work, "chain");
}

// After the base compile: its chain's trajectories, kept for the rounds
// (a failed base compile's are of no use).
void ChainForking::compiled(const std::string &module, const std::string &work, bool ok) const {
  std::string chain = chainDirectory(work);
  std::string kept = "explore/chains/" + exploreChainName(module);
  llvm::consumeError(removeTreeBeneath(S.OutputDir, kept));
  if (chain.empty() || !ok || !llvm::sys::fs::is_directory(chain))
    return;
  if (llvm::Error e = makeDirectoriesBeneath(S.OutputDir, dirName(kept)))
    return llvm::consumeError(std::move(e)); // the rounds compile them
  if (std::error_code ec = llvm::sys::fs::rename(chain, joinPath(S.OutputDir, kept)))
    log::warning(module + ": cannot keep its explored trajectories (" + ec.message() + "): the rounds compile them");
}

// A round of --explore: the module's trajectory `Round`, forked by its
// base compile, in place of a compile, when it is the one the round
// would compile: it ended ok, followed the same policy and its decisions
// start with the round's prefix (the rest follows from the policy, as in
// a replay). Its files become the compile's outputs in `work`.
bool ChainAdoption::takeInsteadOfCompile(const std::string &module, const std::string &work,
                                         const AdvisorSetup &advisor, const ModuleCommands &commands,
                                         HarvestRecord &record) const {
  auto prefix = S.Prefix.find(module);
  if (prefix == S.Prefix.end())
    return false;
  // Below the chains' directory, through no link, regular files only:
  // the compile that wrote them is data from the corpus too.
  std::string relative = exploreChainName(module) + "/t" + std::to_string(S.Round);
  std::string dir = joinPath(S.ChainsDir, relative);
  // A missing file means the chain did not get there; anything else odd is said.
  auto refuse = [&](const std::string &why) {
    log::warning(module + ": explored trajectory " + std::to_string(S.Round) +
                 " of its fork chain is not taken (compiled instead): " + why);
    return false;
  };
  // Each file is opened once and taken only through that descriptor, so
  // nothing put in its place after the check is read.
  struct Taken {
    const char *Name;
    std::string To; // where the compile's output goes; "" for status.json
    FileDescriptor Fd;
  };
  std::vector<Taken> files;
  files.push_back({"status.json", "", {}});
  files.push_back({"training.log", advisor.TrainingLog, {}});
  files.push_back({"native.o", commands.Native, {}});
  files.push_back({"compile.stderr", joinPath(work, "compile.stderr"), {}});
  if (!advisor.SitesFile.empty())
    files.push_back({"sites.jsonl", advisor.SitesFile, {}});
  for (Taken &file : files) {
    auto fd = openRegularFileBeneath(S.ChainsDir, relative + "/" + file.Name);
    if (!fd) {
      llvm::Error error = fd.takeError();
      if (consumeIfMissing(error))
        return false;
      return refuse(llvm::toString(std::move(error)));
    }
    file.Fd = std::move(*fd);
  }
  // Test seam (docs/harvest-exploration.md#exploring-by-forking): MLGO_EXPLORE_ADOPT_SWAP=1 puts the
  // next trajectory's file in each opened one's place, before anything is
  // read, as a compile still writing there could; what is taken must stay
  // what was opened. The next one's is taken as the round takes a file
  // (below the chains, through no link), then linked aside and renamed in.
  if (const char *swap = std::getenv("MLGO_EXPLORE_ADOPT_SWAP"); swap && std::strcmp(swap, "1") == 0) {
    std::string next = exploreChainName(module) + "/t" + std::to_string(S.Round + 1);
    size_t swapped = 0;
    for (const Taken &file : files) {
      if (file.To.empty())
        continue;
      auto from = openRegularFileBeneath(S.ChainsDir, next + "/" + file.Name);
      if (!from) {
        llvm::consumeError(from.takeError());
        continue;
      }
      std::string to = joinPath(dir, file.Name), aside = to + ".swap";
      if (linkDescriptor(from->get(), aside) && !llvm::sys::fs::rename(aside, to))
        ++swapped;
      else
        llvm::sys::fs::remove(aside);
    }
    if (swapped)
      log::warning(module + ": test seam: " + std::to_string(swapped) + " files of explored trajectory " +
                   std::to_string(S.Round) + " swapped after their check");
  }
  // The parent trajectory's few words (ExplorationChain.cpp); anything larger is not one.
  constexpr long MaxStatusBytes = 4096;
  std::string status = joinPath(dir, "status.json");
  char text[MaxStatusBytes + 1];
  long size = readUpTo(files[0].Fd.get(), text, sizeof text);
  if (size < 0) {
    int error = errno;
    return refuse("cannot read " + status + ": " + std::strerror(error));
  }
  if (size > MaxStatusBytes)
    return refuse(status + " is not a status of at most 4 KiB");
  auto json = nlohmann::json::parse(text, text + size, nullptr, false);
  if (!json.is_object())
    return refuse(status + " is not a JSON object");
  auto field = [&](const char *name) { return json.contains(name) ? json[name] : nullptr; };
  if (field("status") != "exit" || field("exit") != 0 || field("then") != S.Then)
    return false;
  // Each file is linked into the work directory from the descriptor that
  // was checked (a rename would take whatever the name holds by then, a
  // copy could be asked to write a huge sparse file out).
  auto discard = [&] { // the round compiles it: nothing of the trajectory stays
    for (Taken &file : files)
      if (!file.To.empty())
        llvm::sys::fs::remove(file.To);
    return false;
  };
  for (Taken &file : files) {
    if (file.To.empty())
      continue;
    llvm::sys::fs::remove(file.To);
    if (!linkDescriptor(file.Fd.get(), file.To)) {
      int error = errno;
      discard();
      return refuse("cannot link " + joinPath(dir, file.Name) + " into " + work + ": " + std::strerror(error));
    }
  }
  auto decisions = loggedDecisions(advisor.TrainingLog);
  if (!decisions) {
    discard();
    return refuse(llvm::toString(decisions.takeError()));
  }
  if (decisions->size() < prefix->second.size() ||
      !std::equal(prefix->second.begin(), prefix->second.end(), decisions->begin()))
    return discard();
  // What the harvest checks of a compile's outputs, checked here, so that
  // a trajectory the chain got wrong is compiled, not recorded as failed.
  if (auto object = berkeleyTextSize(commands.Native); !object) {
    discard();
    return refuse(joinPath(dir, "native.o") + " is not an object file whose size can be measured (" +
                  llvm::toString(object.takeError()) + ")");
  }
  if (!advisor.SitesFile.empty()) {
    auto sites = countLines(advisor.SitesFile);
    if (!sites || *sites != decisions->size()) {
      discard();
      return refuse(joinPath(dir, "sites.jsonl") + " does not hold one site per decision" +
                    (sites ? "" : ": " + llvm::toString(sites.takeError())));
    }
  }
  record.Status = "ok";
  record.ExitStatus = "exit 0";
  ++Adopted;
  return true;
}

} // namespace mlgo
