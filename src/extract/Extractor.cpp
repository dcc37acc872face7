#include "mlgo/extract/Extractor.h"

#include "mlgo/corpus/ModuleNaming.h"
#include "mlgo/extract/BitcodeCheck.h"
#include "mlgo/extract/Journal.h"
#include "mlgo/extract/SectionReader.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/Progress.h"

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace mlgo {
namespace {

struct WorkItem {
  ObjectCandidate Candidate;
  size_t OutcomeIndex;
};

ModuleOutcome failure(ModuleOutcome outcome, const char *reason, std::string detail,
                      ModuleStatus status = ModuleStatus::Failed) {
  outcome.Status = status;
  outcome.Reason = reason;
  outcome.Detail = std::move(detail);
  return outcome;
}

std::string modulePath(const ExtractOptions &options, const std::string &name, const char *suffix) {
  return joinPath(options.OutputDir, name + suffix);
}

bool fileExists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The files a finished module must have on disk.
std::vector<std::string> expectedFiles(const ExtractOptions &options, const std::string &name) {
  std::vector<std::string> files{modulePath(options, name, ".bc")};
  if (options.ThinLTO != ThinLTOMode::Local)
    files.push_back(modulePath(options, name, ".cmd"));
  if (options.ThinLTO != ThinLTOMode::None)
    files.push_back(modulePath(options, name, ".thinlto.bc"));
  return files;
}

std::unique_ptr<llvm::MemoryBuffer> readWholeFile(const std::string &path, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = path + ": " + buffer.getError().message();
    return nullptr;
  }
  return std::move(*buffer);
}

// Modules that ml-compiler-opt cannot load are kept but flagged.
void addConsumerWarnings(ModuleOutcome &outcome, llvm::StringRef cmd) {
  if (!llvm::json::isUTF8(cmd))
    outcome.Warnings.push_back("cmd_not_utf8");
  std::vector<llvm::StringRef> fields = splitCommandLineSection(cmd);
  if (fields.empty() || fields.front() != "-cc1")
    outcome.Warnings.push_back("cmd_not_cc1");
}

class ModuleExtractor {
public:
  ModuleExtractor(const ExtractOptions &options, std::string stagingDir)
      : Options(options), StagingDir(std::move(stagingDir)) {}

  ModuleOutcome extract(const ObjectCandidate &candidate, ModuleOutcome outcome) const {
    return Options.ThinLTO == ThinLTOMode::Local ? extractLocalThinLTO(candidate, std::move(outcome))
                                                 : extractObject(candidate, std::move(outcome));
  }

private:
  ModuleOutcome extractObject(const ObjectCandidate &candidate, ModuleOutcome outcome) const {
    const std::string &input = outcome.Input;
    std::string error;
    std::unique_ptr<llvm::MemoryBuffer> buffer = readWholeFile(input, error);
    if (!buffer)
      return failure(std::move(outcome), "input_unreadable", error);
    auto object = llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
    if (!object)
      return failure(std::move(outcome), "not_an_object",
                     input + ": not an object file: " + llvm::toString(object.takeError()));

    auto bitcode = findSectionContents(**object, Options.BitcodeSection);
    if (!bitcode)
      return failure(std::move(outcome), "section_unreadable", llvm::toString(bitcode.takeError()));
    if (!*bitcode)
      return failure(std::move(outcome), "bitcode_section_missing", missingSectionDetail(**object, Options.BitcodeSection));
    auto cmd = findSectionContents(**object, Options.CmdSection);
    if (!cmd)
      return failure(std::move(outcome), "section_unreadable", llvm::toString(cmd.takeError()));
    if (!*cmd)
      return failure(std::move(outcome), "cmd_section_missing", missingSectionDetail(**object, Options.CmdSection));

    if (llvm::Error e = verify(**bitcode, outcome))
      return failure(std::move(outcome), "invalid_bitcode", input + ": " + llvm::toString(std::move(e)));
    if (Options.Filter && !Options.Filter->matches(**cmd))
      return failure(std::move(outcome), "cmd_filter",
                     "Excluding module " + input + " because it does not match the filter",
                     ModuleStatus::Filtered);

    std::unique_ptr<llvm::MemoryBuffer> index;
    if (Options.ThinLTO == ThinLTOMode::Distributed) {
      std::optional<std::string> indexPath = thinLTOIndexPath(**cmd, candidate.Base);
      if (!indexPath)
        return failure(std::move(outcome), "thinlto_index_option_missing",
                       input + ": no -fthinlto-index in its embedded command line");
      index = readWholeFile(*indexPath, error);
      if (!index)
        return failure(std::move(outcome), "thinlto_index_missing", "ThinLTO index " + error);
    }
    addConsumerWarnings(outcome, **cmd);

    StagedFiles files(StagingDir);
    llvm::Error e = files.add(modulePath(Options, outcome.Name, ".cmd"), **cmd);
    if (!e && index)
      e = files.add(modulePath(Options, outcome.Name, ".thinlto.bc"), index->getBuffer());
    if (!e)
      e = files.add(modulePath(Options, outcome.Name, ".bc"), **bitcode);
    if (!e)
      e = files.commit();
    if (e)
      return failure(std::move(outcome), "write_failed", llvm::toString(std::move(e)));
    outcome.Status = ModuleStatus::Ok;
    return outcome;
  }

  ModuleOutcome extractLocalThinLTO(const ObjectCandidate &candidate, ModuleOutcome outcome) const {
    std::string error;
    std::string source = joinPath(candidate.Base, candidate.Rel);
    auto imported = readWholeFile(source + ".3.import.bc", error);
    if (!imported)
      return failure(std::move(outcome), "input_missing", error);
    auto index = readWholeFile(source + ".thinlto.bc", error);
    if (!index)
      return failure(std::move(outcome), "thinlto_index_missing", error);
    if (llvm::Error e = verify(imported->getBuffer(), outcome))
      return failure(std::move(outcome), "invalid_bitcode", source + ".3.import.bc: " + llvm::toString(std::move(e)));
    StagedFiles files(StagingDir);
    llvm::Error e = files.add(modulePath(Options, outcome.Name, ".thinlto.bc"), index->getBuffer());
    if (!e)
      e = files.add(modulePath(Options, outcome.Name, ".bc"), imported->getBuffer());
    if (!e)
      e = files.commit();
    if (e)
      return failure(std::move(outcome), "write_failed", llvm::toString(std::move(e)));
    outcome.Status = ModuleStatus::Ok;
    return outcome;
  }

  llvm::Error verify(llvm::StringRef bitcode, ModuleOutcome &outcome) const {
    if (Options.VerifyBitcode)
      return checkBitcode(bitcode);
    if (!hasBitcodeMagic(bitcode))
      outcome.Warnings.push_back("bc_no_magic");
    return llvm::Error::success();
  }

  static std::string missingSectionDetail(const llvm::object::ObjectFile &object, llvm::StringRef name) {
    std::string detail = "section '" + name.str() + "' not found";
    if (object.isMachO() && !name.contains(','))
      detail += " (Mach-O sections are named SEGMENT,section: use --bitcode_section_name=__LLVM,__bitcode "
                "--cmd_section_name=__LLVM,__cmdline)";
    return detail;
  }

  // The value of the first -fthinlto-index=... argument, joined onto `base`.
  static std::optional<std::string> thinLTOIndexPath(llvm::StringRef cmd, llvm::StringRef base) {
    for (llvm::StringRef field : splitCommandLineSection(cmd)) {
      if (!field.starts_with("-fthinlto-index"))
        continue;
      size_t eq = field.find('=');
      if (eq == llvm::StringRef::npos || eq + 1 == field.size())
        return std::nullopt;
      return joinPath(base, field.drop_front(eq + 1));
    }
    return std::nullopt;
  }

  const ExtractOptions &Options;
  std::string StagingDir;
};

// Removes staging directories left by runs that were killed.
void removeStaleStaging(const std::string &stateDir) {
  DIR *dir = ::opendir(stateDir.c_str());
  if (!dir)
    return;
  std::vector<std::string> stale;
  while (struct dirent *entry = ::readdir(dir)) {
    llvm::StringRef name = entry->d_name;
    long pid;
    if (name.consume_front("staging.") && !name.getAsInteger(10, pid) &&
        (pid == ::getpid() || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)))
      stale.push_back(joinPath(stateDir, entry->d_name));
  }
  ::closedir(dir);
  for (const std::string &path : stale)
    llvm::sys::fs::remove_directories(path);
}

} // namespace

std::string stateDirectory(llvm::StringRef outputDir) { return joinPath(outputDir, ".mlgo-corpus"); }

llvm::Expected<ExtractResult> extractCorpus(const LoadedInput &input, const ExtractOptions &options) {
  std::string stateDir = stateDirectory(options.OutputDir);
  if (std::error_code ec = llvm::sys::fs::create_directories(stateDir))
    return llvm::createStringError(ec, "cannot create output directory %s: %s", options.OutputDir.c_str(),
                                   ec.message().c_str());
  removeStaleStaging(stateDir);
  std::string stagingDir = joinPath(stateDir, "staging." + std::to_string(::getpid()));
  if (std::error_code ec = llvm::sys::fs::create_directories(stagingDir))
    return llvm::createStringError(ec, "cannot create %s: %s", stagingDir.c_str(), ec.message().c_str());

  std::string journalPath = joinPath(stateDir, "extract_ir.journal");
  std::unordered_map<std::string, ModuleOutcome> journaled;
  if (options.Resume)
    for (ModuleOutcome &record : readJournal(journalPath))
      if (record.Status == ModuleStatus::Ok)
        journaled[record.Input] = std::move(record);
  JournalWriter journal;
  if (llvm::Error e = journal.open(journalPath, /*truncate=*/!options.Resume))
    return std::move(e);

  ExtractResult result;
  for (const SkippedEntry &skipped : input.Skipped) {
    ModuleOutcome o;
    o.Origin = skipped.Origin;
    o.Status = ModuleStatus::Skipped;
    o.Reason = skipped.Reason;
    o.Detail = skipped.Detail;
    result.Outcomes.push_back(std::move(o));
  }

  // Plan: dedupe inputs, derive names, refuse collisions, reuse resumed work.
  std::vector<WorkItem> work;
  std::unordered_map<std::string, std::string> firstOriginByInput;
  std::unordered_map<std::string, std::string> inputByName;
  for (const ObjectCandidate &candidate : input.Candidates) {
    ModuleOutcome outcome;
    outcome.Input = joinPath(candidate.Base, candidate.Rel);
    outcome.Origin = candidate.Origin;
    std::string key = absolutePath(outcome.Input);
    auto [first, isNew] = firstOriginByInput.emplace(key, candidate.Origin);
    if (!isNew) {
      log::warning(outcome.Input + " is listed more than once; extracting it once (first at " + first->second + ")");
      result.Outcomes.push_back(failure(std::move(outcome), "duplicate",
                                        "same object as " + first->second, ModuleStatus::Duplicate));
      continue;
    }
    auto name = moduleNameForObject(candidate.Rel, candidate.Base);
    if (!name) {
      result.Outcomes.push_back(failure(std::move(outcome), "bad_object_path", llvm::toString(name.takeError())));
      continue;
    }
    outcome.Name = *name;
    auto [owner, nameIsNew] = inputByName.emplace(*name, outcome.Input);
    if (!nameIsNew) {
      result.Outcomes.push_back(failure(std::move(outcome), "name_collision",
                                        "output name " + *name + " collides with " + owner->second));
      continue;
    }
    if (options.ThinLTO != ThinLTOMode::Local) {
      struct stat st;
      if (::stat(outcome.Input.c_str(), &st) != 0) {
        result.Outcomes.push_back(failure(std::move(outcome), "input_missing", outcome.Input + " does not exist."));
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        result.Outcomes.push_back(
            failure(std::move(outcome), "input_is_directory", outcome.Input + " is a directory, not an object"));
        continue;
      }
      outcome.InputSize = static_cast<uint64_t>(st.st_size);
      outcome.InputMtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    }
    if (auto done = journaled.find(outcome.Input); done != journaled.end()) {
      const ModuleOutcome &record = done->second;
      bool unchanged = record.Name == outcome.Name && record.InputSize == outcome.InputSize &&
                       record.InputMtimeNs == outcome.InputMtimeNs;
      bool filesPresent = true;
      for (const std::string &file : expectedFiles(options, outcome.Name))
        filesPresent = filesPresent && fileExists(file);
      if (unchanged && filesPresent) {
        outcome.Status = ModuleStatus::Ok;
        outcome.Resumed = true;
        result.Outcomes.push_back(std::move(outcome));
        continue;
      }
    }
    work.push_back({candidate, result.Outcomes.size()});
    result.Outcomes.push_back(std::move(outcome));
  }

  // Extract in parallel; each task owns its outcome slot.
  unsigned workers = options.NumWorkers ? options.NumWorkers : std::max(1u, std::thread::hardware_concurrency());
  ModuleExtractor extractor(options, stagingDir);
  Progress progress("modules", work.size(), options.ProgressInterval);
  std::atomic<bool> interrupted{false};
  tbb::task_arena arena(static_cast<int>(workers));
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, work.size(), 1), [&](const tbb::blocked_range<size_t> &range) {
      for (size_t i = range.begin(); i != range.end(); ++i) {
        if (interruptRequested()) {
          interrupted = true;
          return;
        }
        ModuleOutcome &slot = result.Outcomes[work[i].OutcomeIndex];
        slot = extractor.extract(work[i].Candidate, std::move(slot));
        if (slot.Status != ModuleStatus::Ok)
          log::info(slot.Input + " was not processed: " + slot.Detail);
        journal.append(slot);
        progress.advance(slot.Status == ModuleStatus::Ok);
      }
    });
  });
  progress.finish();
  llvm::sys::fs::remove_directories(stagingDir);

  // Interrupted: the unattempted candidates are neither done nor failed.
  bool wasInterrupted = interrupted || interruptRequested();
  if (wasInterrupted) {
    std::unordered_set<size_t> pending;
    for (const WorkItem &item : work)
      if (result.Outcomes[item.OutcomeIndex].Status == ModuleStatus::Failed &&
          result.Outcomes[item.OutcomeIndex].Reason.empty())
        pending.insert(item.OutcomeIndex);
    std::vector<ModuleOutcome> finished;
    for (size_t i = 0; i < result.Outcomes.size(); ++i)
      if (!pending.count(i))
        finished.push_back(std::move(result.Outcomes[i]));
    result.Outcomes = std::move(finished);
  }
  journal.close();

  result.Summary = summarize(result.Outcomes, wasInterrupted);
  nlohmann::ordered_json report = buildExtractReport(result.Outcomes, result.Summary, options.ReportContext);
  result.ReportPath = joinPath(stateDir, "extract_ir.report.json");
  if (llvm::Error e = writeFileAtomically(result.ReportPath,
                                          report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"))
    return std::move(e);
  if (wasInterrupted)
    return result;

  // A complete run: compact the journal to exactly this run's results.
  std::string compacted;
  for (const ModuleOutcome &o : result.Outcomes)
    if (o.Status != ModuleStatus::Skipped)
      compacted += journalLine(o);
  if (llvm::Error e = writeFileAtomically(journalPath, compacted))
    return std::move(e);

  CorpusDescription description;
  if (options.ThinLTO == ThinLTOMode::Local)
    description.Fields["global_command_override"] = {"<UNSPECIFIED>"};
  description.Fields["has_thinlto"] = options.ThinLTO != ThinLTOMode::None;
  for (const ModuleOutcome &o : result.Outcomes)
    if (o.Status == ModuleStatus::Ok)
      description.Modules.push_back(o.Name);
  if (llvm::Error e = writeCorpusDescription(options.OutputDir, description))
    return llvm::createStringError("cannot write %s/%s: %s", options.OutputDir.c_str(), CorpusDescriptionFile,
                                   llvm::toString(std::move(e)).c_str());
  result.Description = std::move(description);
  return result;
}

} // namespace mlgo
