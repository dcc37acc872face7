#include "mlgo/extract/Extractor.h"

#include "mlgo/corpus/BitcodeCheck.h"
#include "mlgo/corpus/ModuleNaming.h"
#include "mlgo/extract/Journal.h"
#include "mlgo/extract/LinkedSections.h"
#include "mlgo/extract/SectionReader.h"
#include "mlgo/extract/ThinLTOIndex.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/DirectoryLock.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/Progress.h"
#include "mlgo/support/StaleTemporaries.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Object/Archive.h"
#include "llvm/Object/Binary.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace mlgo {
namespace {

using Outcomes = std::vector<ModuleOutcome>;

struct WorkItem {
  ObjectCandidate Candidate;
  size_t Slot;
};

// Takes the outcome by reference: callers build `detail` from the outcome
// they pass, and a by-value parameter could be moved from first (argument
// order is unspecified; clang's builds lost the input name that way).
ModuleOutcome failure(ModuleOutcome &&outcome, const char *reason, std::string detail,
                      ModuleStatus status = ModuleStatus::Failed) {
  outcome.Status = status;
  outcome.Reason = reason;
  outcome.Detail = std::move(detail);
  return std::move(outcome);
}

std::string modulePath(const ExtractOptions &options, const std::string &name, const char *suffix) {
  return joinPath(options.OutputDir, name + suffix);
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The files a finished module must have on disk.
std::vector<std::string> expectedFiles(const ExtractOptions &options, const std::string &name) {
  std::vector<std::string> files{modulePath(options, name, ".bc")};
  if (options.Source == SourceKind::Objects && options.ThinLTO != ThinLTOMode::Local)
    files.push_back(modulePath(options, name, ".cmd"));
  if (options.ThinLTO != ThinLTOMode::None)
    files.push_back(modulePath(options, name, ".thinlto.bc"));
  return files;
}

// Files below this size are read into memory rather than mapped: for a
// typical object of a few KB, an mmap, its page faults and the munmap cost
// more system time than copying the bytes.
constexpr uint64_t MapThreshold = uint64_t(1) << 20;

// Reads a whole input. With `knownSize` (from the stat done when planning),
// no second stat is needed: open, read, close.
std::unique_ptr<llvm::MemoryBuffer> readWholeFile(const std::string &path, std::string &error,
                                                  std::optional<uint64_t> knownSize = std::nullopt) {
  auto fail = [&](std::error_code ec) -> std::unique_ptr<llvm::MemoryBuffer> {
    error = path + ": " + ec.message();
    return nullptr;
  };
  if (!knownSize) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buffer)
      return fail(buffer.getError());
    return std::move(*buffer);
  }
  // Plain open/close: LLVM's closeFile masks all signals around close(), two
  // more system calls per object for a guarantee a read-only fd does not need.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(std::error_code(errno, std::generic_category()));
  auto buffer = llvm::MemoryBuffer::getOpenFile(fd, path, *knownSize, /*RequiresNullTerminator=*/false,
                                                /*IsVolatile=*/*knownSize < MapThreshold);
  ::close(fd);
  if (!buffer)
    return fail(buffer.getError());
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

// Names archive members inside the archive's module name, uniquely:
// lib/libfoo.a/x.o, and lib/libfoo.a/x.o@2 for a second member named x.o.
// Thin archives may store paths; only the file name is used.
class MemberNamer {
public:
  explicit MemberNamer(std::string archiveName) : Archive(std::move(archiveName)) {}
  std::string name(llvm::StringRef member) {
    std::string leaf = baseName(member).str();
    if (leaf.empty() || leaf == "." || leaf == "..")
      leaf = "member";
    unsigned seen = ++Seen[leaf];
    return Archive + "/" + leaf + (seen > 1 ? "@" + std::to_string(seen) : "");
  }

private:
  std::string Archive;
  std::map<std::string, unsigned> Seen;
};

class ModuleExtractor {
public:
  ModuleExtractor(const ExtractOptions &options, std::string stagingDir)
      : Options(options), StagingDir(std::move(stagingDir)) {}

  Outcomes extract(const ObjectCandidate &candidate, ModuleOutcome outcome) const {
    if (Options.ThinLTO == ThinLTOMode::Local)
      return {extractLocalThinLTO(candidate, std::move(outcome))};
    if (Options.Source == SourceKind::BitcodeFiles)
      return {copyBitcodeFile(std::move(outcome))};
    return extractObjectOrArchive(candidate, std::move(outcome));
  }

private:
  Outcomes extractObjectOrArchive(const ObjectCandidate &candidate, ModuleOutcome outcome) const {
    std::string error;
    std::unique_ptr<llvm::MemoryBuffer> buffer = readWholeFile(outcome.Input, error, outcome.InputSize);
    if (!buffer)
      return {failure(std::move(outcome), "input_unreadable", error)};
    auto binary = llvm::object::createBinary(buffer->getMemBufferRef());
    if (!binary)
      return {failure(std::move(outcome), "not_an_object",
                      outcome.Input + ": not an object file: " + llvm::toString(binary.takeError()))};
    if (auto *object = llvm::dyn_cast<llvm::object::ObjectFile>(binary->get()))
      return extractFromObject(*object, candidate, std::move(outcome));
    if (auto *archive = llvm::dyn_cast<llvm::object::Archive>(binary->get()))
      return extractFromArchive(*archive, candidate, std::move(outcome));
    return {failure(std::move(outcome), "not_an_object", outcome.Input + ": not an object file or archive")};
  }

  // Each member with embedded bitcode becomes a module named after the
  // archive and the member.
  Outcomes extractFromArchive(const llvm::object::Archive &archive, const ObjectCandidate &candidate,
                              ModuleOutcome outcome) const {
    Outcomes outcomes;
    MemberNamer namer(outcome.Name);
    llvm::Error err = llvm::Error::success();
    for (const llvm::object::Archive::Child &child : archive.children(err)) {
      ModuleOutcome member = outcome;
      auto memberName = child.getName();
      member.Member = memberName ? memberName->str() : "?";
      if (!memberName)
        llvm::consumeError(memberName.takeError());
      member.Name = namer.name(member.Member);
      auto memberBuffer = child.getMemoryBufferRef();
      if (!memberBuffer) {
        outcomes.push_back(
            failure(std::move(member), "input_unreadable",
                    outcome.Input + "(" + member.Member + "): " + llvm::toString(memberBuffer.takeError())));
        continue;
      }
      // libLLVM 22 does not always check that a member's declared size fits
      // in the archive, and then parses past its end (fuzz/regressions/).
      llvm::StringRef whole = archive.getMemoryBufferRef().getBuffer(), data = memberBuffer->getBuffer();
      if (!archive.isThin() &&
          (data.begin() < whole.begin() || data.end() > whole.end() || data.begin() > data.end())) {
        outcomes.push_back(failure(std::move(member), "input_unreadable",
                                   outcome.Input + "(" + member.Member + "): the member's size (" +
                                       std::to_string(data.size()) + " bytes) extends past the end of the archive"));
        continue;
      }
      auto object = llvm::object::ObjectFile::createObjectFile(*memberBuffer);
      if (!object) {
        outcomes.push_back(failure(std::move(member), "not_an_object",
                                   outcome.Input + "(" + member.Member +
                                       "): not an object file: " + llvm::toString(object.takeError())));
        continue;
      }
      for (ModuleOutcome &o : extractFromObject(**object, candidate, std::move(member)))
        outcomes.push_back(std::move(o));
    }
    if (err)
      outcomes.push_back(failure(std::move(outcome), "not_an_object",
                                 outcome.Input + ": malformed archive: " + llvm::toString(std::move(err))));
    else if (outcomes.empty())
      outcomes.push_back(failure(std::move(outcome), "empty_archive", outcome.Input + ": the archive has no members"));
    return outcomes;
  }

  Outcomes extractFromObject(const llvm::object::ObjectFile &object, const ObjectCandidate &candidate,
                             ModuleOutcome outcome) const {
    std::string where = outcome.Input + (outcome.Member.empty() ? "" : "(" + outcome.Member + ")");
    EmbeddedSectionNames native = nativeSectionNames(object);
    llvm::StringRef bitcodeSection = Options.BitcodeSection.empty() ? native.Bitcode : Options.BitcodeSection;
    llvm::StringRef cmdSection = Options.CmdSection.empty() ? native.Cmd : Options.CmdSection;
    auto bitcode = findSectionContents(object, bitcodeSection);
    if (!bitcode)
      return {failure(std::move(outcome), "section_unreadable", where + ": " + llvm::toString(bitcode.takeError()))};
    if (!*bitcode)
      return {failure(std::move(outcome), "bitcode_section_missing", missingSectionDetail(object, bitcodeSection))};
    auto cmd = findSectionContents(object, cmdSection);
    if (!cmd)
      return {failure(std::move(outcome), "section_unreadable", where + ": " + llvm::toString(cmd.takeError()))};
    if (!*cmd)
      return {failure(std::move(outcome), "cmd_section_missing", missingSectionDetail(object, cmdSection))};
    // A linked file (or `ld -r` output) holds one module per object it was
    // linked from; a plain object is copied as is.
    if (!object.isRelocatableObject() || holdsSeveralCommandLines(**cmd))
      return extractLinkedModules(**bitcode, **cmd, candidate, std::move(outcome), where);
    return {extractModule(**bitcode, **cmd, candidate, std::move(outcome), where)};
  }

  static bool holdsSeveralCommandLines(llvm::StringRef cmd) {
    auto lines = splitCommandLines(cmd);
    if (!lines) {
      llvm::consumeError(lines.takeError());
      return false;
    }
    return lines->size() > 1;
  }

  // Pairs the n-th bitcode file with the n-th command line. Modules are named
  // `<file's module name>/<source file name>` (from -main-file-name; `module`
  // when absent), `@2`, `@3` for repeats, as archive members are.
  Outcomes extractLinkedModules(llvm::StringRef bitcode, llvm::StringRef cmd, const ObjectCandidate &candidate,
                                ModuleOutcome outcome, const std::string &where) const {
    auto modules = splitBitcodeSection(bitcode);
    if (!modules)
      return {failure(std::move(outcome), "section_unsplittable", where + ": " + llvm::toString(modules.takeError()))};
    auto lines = splitCommandLines(cmd);
    if (!lines)
      return {failure(std::move(outcome), "section_unsplittable", where + ": " + llvm::toString(lines.takeError()))};
    if (modules->empty())
      return {failure(std::move(outcome), "invalid_bitcode", where + ": the bitcode section is empty")};
    if (modules->size() != lines->size())
      return {failure(std::move(outcome), "module_count_mismatch",
                      where + ": the bitcode section holds " + std::to_string(modules->size()) +
                          " modules but the command-line section holds " + std::to_string(lines->size()) +
                          " command lines, so they cannot be paired")};
    Outcomes outcomes;
    MemberNamer namer(outcome.Name);
    for (size_t i = 0; i < modules->size(); ++i) {
      ModuleOutcome module = outcome;
      module.Member = "module " + std::to_string(i + 1);
      module.Name = namer.name(mainFileName((*lines)[i]).value_or("module"));
      outcomes.push_back(extractModule((*modules)[i], (*lines)[i], candidate, std::move(module),
                                       where + "[" + std::to_string(i + 1) + "]"));
    }
    return outcomes;
  }

  ModuleOutcome extractModule(llvm::StringRef bitcode, llvm::StringRef cmd, const ObjectCandidate &candidate,
                              ModuleOutcome outcome, const std::string &where) const {
    if (llvm::Error e = verify(bitcode, outcome))
      return failure(std::move(outcome), "invalid_bitcode", where + ": " + llvm::toString(std::move(e)));
    if (Options.Filter && !Options.Filter->matches(cmd))
      return failure(std::move(outcome), "cmd_filter",
                     "Excluding module " + where + " because it does not match the filter", ModuleStatus::Filtered);

    std::unique_ptr<llvm::MemoryBuffer> index;
    if (Options.ThinLTO == ThinLTOMode::Distributed) {
      std::optional<std::string> indexPath = thinLTOIndexPath(cmd, candidate.Base);
      if (!indexPath)
        return failure(std::move(outcome), "thinlto_index_option_missing",
                       where + ": no -fthinlto-index in its embedded command line");
      ThinLTOIndexRead read = readThinLTOIndex(*indexPath, candidate.Base);
      if (!read.Buffer)
        return failure(std::move(outcome), read.Reason, where + ": " + read.Detail);
      index = std::move(read.Buffer);
    }
    addConsumerWarnings(outcome, cmd);

    StagedFiles files(StagingDir);
    llvm::Error e = files.add(modulePath(Options, outcome.Name, ".cmd"), cmd);
    if (!e && index)
      e = files.add(modulePath(Options, outcome.Name, ".thinlto.bc"), index->getBuffer());
    if (!e)
      e = files.add(modulePath(Options, outcome.Name, ".bc"), bitcode);
    return commit(files, std::move(e), std::move(outcome));
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
    return commit(files, std::move(e), std::move(outcome));
  }

  // make-corpus: the file is the module; its permission bits are kept.
  ModuleOutcome copyBitcodeFile(ModuleOutcome outcome) const {
    std::string error;
    auto bitcode = readWholeFile(outcome.Input, error, outcome.InputSize);
    if (!bitcode)
      return failure(std::move(outcome), "input_unreadable", error);
    if (llvm::Error e = verify(bitcode->getBuffer(), outcome))
      return failure(std::move(outcome), "invalid_bitcode", outcome.Input + ": " + llvm::toString(std::move(e)));
    std::string destination = modulePath(Options, outcome.Name, ".bc");
    struct stat source, target;
    if (::stat(outcome.Input.c_str(), &source) != 0)
      return failure(std::move(outcome), "input_unreadable", outcome.Input + ": " + std::strerror(errno));
    if (::stat(destination.c_str(), &target) == 0 && source.st_dev == target.st_dev && source.st_ino == target.st_ino) {
      outcome.Status = ModuleStatus::Ok; // already in place (input_dir == output_dir)
      return outcome;
    }
    StagedFiles files(StagingDir);
    llvm::Error e = files.add(destination, bitcode->getBuffer(), source.st_mode & 07777);
    return commit(files, std::move(e), std::move(outcome));
  }

  static ModuleOutcome commit(StagedFiles &files, llvm::Error staged, ModuleOutcome outcome) {
    if (!staged)
      staged = files.commit();
    if (staged)
      return failure(std::move(outcome), "write_failed", llvm::toString(std::move(staged)));
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
      detail += " (Mach-O sections are named SEGMENT,section; without --bitcode_section_name and "
                "--cmd_section_name, __LLVM,__bitcode and __LLVM,__cmdline are read)";
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

// Modules per group commit: a killed run redoes at most this many.
constexpr size_t JournalGroupCommitBatch = 64;

// What a killed run left, removed while we hold the lock (so no live run of
// extract-ir or make-corpus writes there: every such name is a dead run's):
// its staging directories, the temporaries of its report and compacted
// journal in the state directory, and those of the tool's own files at the
// output's top (StaleTemporaries.h). Nothing is followed through a link.
llvm::Error removeDeadRunLeftovers(const ExtractOptions &options, const std::string &stateDir) {
  const std::string state = baseName(stateDir).str();
  std::vector<std::string> staging;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(stateDir, ec), end; !ec && it != end; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    unsigned long pid;
    if (name.consume_front("staging.") && !name.getAsInteger(10, pid))
      staging.push_back(llvm::sys::path::filename(it->path()).str());
  }
  for (const std::string &name : staging)
    if (llvm::Error e = removeTreeBeneath(options.OutputDir, state + "/" + name))
      return e;
  auto inState = removeStaleTemporaries(options.OutputDir, state,
                                        {options.StateName + ".report.json", options.StateName + ".journal"});
  if (!inState)
    return inState.takeError();
  std::set<std::string, std::less<>> own(options.OwnFiles.begin(), options.OwnFiles.end());
  own.insert(CorpusDescriptionFile);
  auto atTop = removeStaleTemporaries(options.OutputDir, "", own);
  return atTop ? llvm::Error::success() : atTop.takeError();
}

// A candidate's journaled results can be reused when they are all ok, the
// input is unchanged and every file is still there.
std::optional<Outcomes> reusable(const Outcomes &records, const ModuleOutcome &current, const ExtractOptions &options) {
  if (records.empty())
    return std::nullopt;
  for (const ModuleOutcome &r : records) {
    if (r.Status != ModuleStatus::Ok || r.InputSize != current.InputSize || r.InputMtimeNs != current.InputMtimeNs)
      return std::nullopt;
    if (r.Member.empty() && r.Name != current.Name)
      return std::nullopt;
    for (const std::string &file : expectedFiles(options, r.Name))
      if (!isRegularFile(file))
        return std::nullopt;
  }
  Outcomes reused;
  for (const ModuleOutcome &r : records) {
    ModuleOutcome o = current;
    o.Member = r.Member;
    o.Name = r.Name;
    o.Status = ModuleStatus::Ok;
    o.Resumed = true;
    reused.push_back(std::move(o));
  }
  return reused;
}

// A re-run never shrinks a corpus silently: a module of the existing
// corpus that failed only because its files could not be rewritten still has
// its previous, whole files (StagedFiles rolls back), so it stays in the
// corpus, reported as failed (the tools then exit non-zero).
void keepUnwritableModules(const ExtractOptions &options, ExtractResult &result) {
  if (!llvm::sys::fs::exists(joinPath(options.OutputDir, CorpusDescriptionFile)))
    return;
  auto previous = readCorpusDescription(options.OutputDir);
  if (!previous) {
    llvm::consumeError(previous.takeError()); // unreadable: nothing to keep
    return;
  }
  std::unordered_set<std::string> before(previous->Modules.begin(), previous->Modules.end());
  for (ModuleOutcome &o : result.Outcomes) {
    if (o.Status != ModuleStatus::Failed || o.Reason != "write_failed" || !before.count(o.Name))
      continue;
    bool whole = true;
    for (const std::string &file : expectedFiles(options, o.Name))
      whole = whole && isRegularFile(file);
    if (!whole)
      continue;
    o.KeptPrevious = true;
    o.Detail += " (the module's previous files are kept in the corpus)";
    result.KeptPrevious.push_back(o.Name);
  }
}

const char *thinLTOName(ThinLTOMode mode) {
  return mode == ThinLTOMode::Local ? "local" : mode == ThinLTOMode::Distributed ? "distributed" : "none";
}

} // namespace

nlohmann::ordered_json extractJournalOptions(const ExtractOptions &options) {
  nlohmann::ordered_json o;
  for (const char *key : {"input", "input_type"})
    if (options.ReportContext.contains(key))
      o[key] = options.ReportContext[key];
  if (options.Source == SourceKind::Objects) {
    o["bitcode_section_name"] = options.BitcodeSection;
    o["cmd_section_name"] = options.CmdSection;
    o["thinlto_build"] = thinLTOName(options.ThinLTO);
    o["cmd_filter"] = options.Filter ? nlohmann::ordered_json(options.Filter->pattern()) : nlohmann::ordered_json();
  }
  o["no_verify_bitcode"] = !options.VerifyBitcode;
  return o;
}

std::string stateDirectory(llvm::StringRef outputDir) { return joinPath(outputDir, ".mlgo-corpus"); }

llvm::Expected<ExtractResult> extractCorpus(const LoadedInput &input, const ExtractOptions &options) {
  std::string stateDir = stateDirectory(options.OutputDir);
  if (std::error_code ec = llvm::sys::fs::create_directories(stateDir))
    return llvm::createStringError(ec, "cannot create output directory %s: %s", options.OutputDir.c_str(),
                                   ec.message().c_str());
  // Before the staging, journal or any module of the output is touched.
  auto lock = DirectoryLock::acquire(options.OutputDir, stateDir);
  if (!lock)
    return lock.takeError();
  if (llvm::Error e = removeDeadRunLeftovers(options, stateDir))
    return e;
  std::string stagingDir = joinPath(stateDir, "staging." + std::to_string(::getpid()));
  if (std::error_code ec = llvm::sys::fs::create_directories(stagingDir))
    return llvm::createStringError(ec, "cannot create %s: %s", stagingDir.c_str(), ec.message().c_str());

  std::string journalPath = joinPath(stateDir, options.StateName + ".journal");
  nlohmann::ordered_json journalOptions = extractJournalOptions(options);
  std::unordered_map<std::string, Outcomes> journaled;
  if (options.Resume) {
    auto contents = readJournalFile(journalPath);
    if (!contents)
      return contents.takeError();
    if (llvm::Error e = checkJournalOptions(*contents, journalOptions, journalPath,
                                            "Run again with the earlier options, or without --resume to start over."))
      return e;
    for (ModuleOutcome &record : outcomesFromJournal(contents->Records))
      journaled[record.Input].push_back(std::move(record));
  }
  JournalAppender journal;
  if (llvm::Error e = journal.open(journalPath, /*truncate=*/!options.Resume, journalOptions))
    return e;
  std::atomic<bool> journalFailed{false};
  // Durable writes by group commit: one syncfs per batch of modules, before
  // their journal lines, instead of two file and two directory syncs per
  // module (docs/extract-ir.md, Durability).
  journal.setGroupCommit(JournalGroupCommitBatch);
  setSyncDeferred(true);
  llvm::scope_exit undefer([] { setSyncDeferred(false); });

  // One slot per input entry, in input order; a slot holds one outcome, or
  // one per member for an archive.
  std::vector<Outcomes> slots;
  for (const SkippedEntry &skipped : input.Skipped) {
    ModuleOutcome o;
    o.Origin = skipped.Origin;
    o.Status = ModuleStatus::Skipped;
    o.Reason = skipped.Reason;
    o.Detail = skipped.Detail;
    slots.push_back({std::move(o)});
  }

  // Plan: dedupe inputs, derive names, refuse collisions, reuse resumed work.
  std::vector<WorkItem> work;
  std::unordered_map<std::string, std::string> firstOriginByInput;
  std::unordered_map<std::string, std::string> inputByName;
  // Once: LLVM's make_absolute stats $PWD and "." on every call.
  const std::string cwd = absolutePath(".");
  for (const ObjectCandidate &candidate : input.Candidates) {
    ModuleOutcome outcome;
    outcome.Input = joinPath(candidate.Base, candidate.Rel);
    outcome.Origin = candidate.Origin;
    auto reject = [&](const char *reason, std::string detail, ModuleStatus status = ModuleStatus::Failed) {
      slots.push_back({failure(std::move(outcome), reason, std::move(detail), status)});
    };
    auto [first, isNew] = firstOriginByInput.emplace(normalizePath(joinPath(cwd, outcome.Input)), candidate.Origin);
    if (!isNew) {
      log::warning(outcome.Input + " is listed more than once; extracting it once (first at " + first->second + ")");
      reject("duplicate", "same input as " + first->second, ModuleStatus::Duplicate);
      continue;
    }
    if (candidate.Name.empty()) {
      auto name = moduleNameForObject(candidate.Rel, candidate.Base);
      if (!name) {
        reject("bad_object_path", llvm::toString(name.takeError()));
        continue;
      }
      outcome.Name = *name;
    } else {
      outcome.Name = candidate.Name;
    }
    auto [owner, nameIsNew] = inputByName.emplace(outcome.Name, outcome.Input);
    if (!nameIsNew) {
      reject("name_collision", "output name " + outcome.Name + " collides with " + owner->second);
      continue;
    }
    if (options.ThinLTO != ThinLTOMode::Local) {
      struct stat st;
      if (::stat(outcome.Input.c_str(), &st) != 0) {
        reject("input_missing", outcome.Input + " does not exist.");
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        reject("input_is_directory", outcome.Input + " is a directory, not a file");
        continue;
      }
      outcome.InputSize = static_cast<uint64_t>(st.st_size);
      outcome.InputMtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    }
    if (auto done = journaled.find(outcome.Input); done != journaled.end())
      if (std::optional<Outcomes> reused = reusable(done->second, outcome, options)) {
        slots.push_back(std::move(*reused));
        continue;
      }
    work.push_back({candidate, slots.size()});
    slots.push_back({std::move(outcome)});
  }

  // Extract in parallel; each task owns its slot.
  unsigned workers = options.NumWorkers ? options.NumWorkers : std::max(1u, std::thread::hardware_concurrency());
  ModuleExtractor extractor(options, stagingDir);
  Progress progress("modules", work.size(), options.ProgressInterval);
  std::vector<char> attempted(work.size(), 0);
  tbb::task_arena arena(static_cast<int>(workers));
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, work.size(), 1), [&](const tbb::blocked_range<size_t> &range) {
      for (size_t i = range.begin(); i != range.end(); ++i) {
        if (interruptRequested() || journalFailed)
          return;
        attempted[i] = 1;
        Outcomes &slot = slots[work[i].Slot];
        slot = extractor.extract(work[i].Candidate, std::move(slot.front()));
        bool ok = true;
        for (const ModuleOutcome &o : slot) {
          if (o.Status != ModuleStatus::Ok)
            log::info((o.Member.empty() ? o.Input : o.Input + "(" + o.Member + ")") +
                      " was not processed: " + o.Detail);
          ok = ok && o.Status == ModuleStatus::Ok;
          // The module's files are durable (StagedFiles) before this line names them.
          if (llvm::Error e = journal.append(journalRecord(o)); e && !journalFailed.exchange(true))
            log::error(llvm::toString(std::move(e)) + ": stopping (finished modules are kept)");
          else
            llvm::consumeError(std::move(e));
        }
        progress.advance(ok);
      }
    });
  });
  progress.finish();
  if (llvm::Error e = journal.close(); e && !journalFailed.exchange(true))
    log::error(llvm::toString(std::move(e)));
  else
    llvm::consumeError(std::move(e));
  setSyncDeferred(false); // the report and manifest below are synced one by one
  llvm::sys::fs::remove_directories(stagingDir);

  // Interrupted (or the journal cannot be written): candidates never
  // attempted are neither done nor failed.
  bool interrupted = interruptRequested() || journalFailed;
  if (interrupted)
    for (size_t i = 0; i < work.size(); ++i)
      if (!attempted[i])
        slots[work[i].Slot].clear();
  ExtractResult result;
  result.Lock = std::move(*lock); // the caller's, while it adds its own files (extract-ir's link_order.json)
  for (Outcomes &slot : slots)
    for (ModuleOutcome &o : slot)
      result.Outcomes.push_back(std::move(o));
  if (!interrupted)
    keepUnwritableModules(options, result);

  result.Summary = summarize(result.Outcomes, interrupted);
  nlohmann::ordered_json report = buildExtractReport(result.Outcomes, result.Summary, options.ReportContext);
  result.ReportPath = joinPath(stateDir, options.StateName + ".report.json");
  if (llvm::Error e = writeFileAtomically(result.ReportPath,
                                          report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"))
    return e;
  if (journalFailed)
    return llvm::createStringError(std::make_error_code(std::errc::io_error),
                                   "the journal %s could not be written; the run stopped (report: %s)",
                                   journalPath.c_str(), result.ReportPath.c_str());
  if (interrupted)
    return result;

  // A complete run: compact the journal to exactly this run's results.
  std::vector<nlohmann::ordered_json> compacted;
  for (const ModuleOutcome &o : result.Outcomes)
    if (o.Status != ModuleStatus::Skipped)
      compacted.push_back(journalRecord(o));
  if (llvm::Error e = rewriteJournal(journalPath, journalOptions, compacted))
    return e;

  CorpusDescription description;
  if (options.GlobalCommandOverride)
    description.Fields["global_command_override"] = *options.GlobalCommandOverride;
  else if (options.ThinLTO == ThinLTOMode::Local)
    description.Fields["global_command_override"] = {"<UNSPECIFIED>"};
  description.Fields["has_thinlto"] = options.ThinLTO != ThinLTOMode::None;
  for (const ModuleOutcome &o : result.Outcomes)
    if (o.Status == ModuleStatus::Ok || o.KeptPrevious)
      description.Modules.push_back(o.Name);
  if (llvm::Error e = writeCorpusDescription(options.OutputDir, description))
    return llvm::createStringError("cannot write %s/%s: %s", options.OutputDir.c_str(), CorpusDescriptionFile,
                                   llvm::toString(std::move(e)).c_str());
  result.Description = std::move(description);
  return result;
}

} // namespace mlgo
