#include "mlgo/evaluate/LinkStep.h"

#include "mlgo/compile/InteractiveSession.h"
#include "mlgo/compile/WorkDirectory.h"
#include "mlgo/evaluate/LinkInputs.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/ShellWords.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <chrono>
#include <map>
#include <set>

namespace mlgo {

namespace {

constexpr llvm::StringLiteral ObjectsWord = "{objects}";
constexpr llvm::StringLiteral OutputWord = "{output}";

size_t occurrences(const std::vector<std::string> &words, llvm::StringRef needle, bool wholeWord) {
  size_t n = 0;
  for (const std::string &word : words) {
    if (wholeWord)
      n += word == needle;
    else
      n += llvm::StringRef(word).count(needle);
  }
  return n;
}

std::string replaceAll(std::string text, llvm::StringRef from, llvm::StringRef to) {
  for (size_t at = text.find(from.str()); at != std::string::npos; at = text.find(from.str(), at + to.size()))
    text.replace(at, from.size(), to.str());
  return text;
}

} // namespace

llvm::Expected<std::vector<std::string>> parseLinkTemplate(llvm::StringRef linkTemplate) {
  auto words = splitShellWords(linkTemplate);
  if (!words)
    return llvm::createStringError("--link: %s", llvm::toString(words.takeError()).c_str());
  if (words->empty())
    return llvm::createStringError("--link: the template is empty");
  // {objects} stands for many arguments, so it must be a word of its own.
  if (occurrences(*words, ObjectsWord, /*wholeWord=*/true) != 1 ||
      occurrences(*words, ObjectsWord, /*wholeWord=*/false) != 1)
    return llvm::createStringError("--link: the template must have the word {objects} (where the objects go) once, "
                                   "e.g. 'clang-22 -fuse-ld=lld {objects} -o {output}'; it is: %s",
                                   linkTemplate.str().c_str());
  // {output} may recur inside words (-Wl,-Map={output}.map), but must be there.
  if (occurrences(*words, OutputWord, /*wholeWord=*/false) == 0)
    return llvm::createStringError("--link: the template must have {output} (the linked binary), e.g. "
                                   "'clang-22 -fuse-ld=lld {objects} -o {output}'; it is: %s",
                                   linkTemplate.str().c_str());
  if ((*words)[0] == ObjectsWord || llvm::StringRef((*words)[0]).contains(OutputWord))
    return llvm::createStringError("--link: the template must start with the linker to run; it is: %s",
                                   linkTemplate.str().c_str());
  return words;
}

std::vector<std::string> linkCommand(const std::vector<std::string> &words, const std::vector<std::string> &objects,
                                     const std::string &output) {
  std::vector<std::string> argv;
  for (const std::string &word : words) {
    if (word == ObjectsWord)
      argv.insert(argv.end(), objects.begin(), objects.end());
    else
      argv.push_back(replaceAll(word, OutputWord, output));
  }
  return argv;
}

llvm::Expected<std::vector<std::string>> readLinkOrderFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "--link_order: cannot read %s: %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  std::vector<std::string> names;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (!line.rtrim("\r").trim().empty())
      names.push_back(line.rtrim("\r").str());
  return names;
}

llvm::Expected<std::vector<std::string>> linkOrder(const std::vector<std::string> &corpusModules,
                                                   const std::vector<std::string> &plannedModules,
                                                   const std::vector<std::string> *listed, llvm::StringRef listName) {
  std::set<std::string> planned(plannedModules.begin(), plannedModules.end());
  std::vector<std::string> order;
  if (!listed) {
    for (const std::string &module : corpusModules)
      if (planned.count(module))
        order.push_back(module);
    return order;
  }
  std::set<std::string> known(corpusModules.begin(), corpusModules.end()), seen;
  for (size_t i = 0; i < listed->size(); ++i) {
    const std::string &name = (*listed)[i];
    if (!known.count(name))
      return llvm::createStringError("%s: entry %zu, '%s', is not a module of the corpus", listName.str().c_str(),
                                     i + 1, name.c_str());
    if (!seen.insert(name).second)
      return llvm::createStringError("%s: entry %zu, '%s', is listed twice", listName.str().c_str(), i + 1,
                                     name.c_str());
    if (planned.count(name))
      order.push_back(name);
  }
  for (const std::string &module : plannedModules)
    if (!seen.count(module))
      return llvm::createStringError("%s does not list module '%s', which this harvest compiles (every linked module "
                                     "must have its place)",
                                     listName.str().c_str(), module.c_str());
  return order;
}

std::string stagedObjectName(llvm::StringRef module) {
  return ".mlgo-harvest/objects/" + workDirectoryName(module) + ".o";
}

std::string stagedObjectPath(llvm::StringRef outputDir, llvm::StringRef module) {
  return joinPath(outputDir, stagedObjectName(module));
}

nlohmann::ordered_json LinkResult::toJson() const {
  nlohmann::ordered_json j;
  j["status"] = Status;
  j["reason"] = Reason;
  j["command"] = Command;
  j["output"] = Output;
  j["order"] = OrderSource;
  j["objects"] = Objects;
  j["extra_objects"] = ExtraObjects;
  j["modules_not_linkable"] = ModulesNotLinkable;
  if (Sizes)
    j["sizes"] = {{"text", Sizes->Text}, {"data", Sizes->Data}, {"bss", Sizes->Bss}, {"allocated", Sizes->allocated()}};
  if (!BaselineStatus.empty()) {
    auto change = [&](const std::optional<uint64_t> &base, uint64_t size) -> nlohmann::ordered_json {
      if (!base || !*base || !Sizes)
        return nullptr;
      return static_cast<double>(size) / static_cast<double>(*base) - 1;
    };
    j["baseline"] = {{"status", BaselineStatus},
                     {"reason", BaselineReason},
                     {"text", DefaultText ? nlohmann::ordered_json(*DefaultText) : nullptr},
                     {"allocated", DefaultAllocated ? nlohmann::ordered_json(*DefaultAllocated) : nullptr},
                     {"text_change", change(DefaultText, Sizes ? Sizes->Text : 0)},
                     {"allocated_change", change(DefaultAllocated, Sizes ? Sizes->allocated() : 0)}};
  }
  j["exit_status"] = ExitStatus;
  j["stderr_tail"] = StderrTail;
  j["seconds"] = Seconds;
  return j;
}

LinkResult linkHarvest(const LinkRequest &request) {
  const LinkSettings &settings = request.Settings;
  LinkResult result;
  result.OrderSource = request.OrderSource;
  result.ExtraObjects = settings.ExtraObjects;
  std::string linkDir = joinPath(request.OutputDir, "link");
  result.Output = joinPath(linkDir, "linked");
  // An earlier run's binary must not outlive a link that is not made now.
  // Nothing below OUT is followed: a `link` planted as a symbolic link is
  // removed itself, never the directory it names.
  if (llvm::Error e = removeTreeBeneath(request.OutputDir, "link")) {
    result.Status = "failed";
    result.Reason = "cannot remove " + linkDir + ": " + llvm::toString(std::move(e));
    return result;
  }

  // A partial link would mislead: every module of the order, or none. Each
  // staged object is a regular file reached through no link below OUT, and
  // asks the linker for nothing but its own contents.
  std::vector<std::string> objects;
  std::vector<std::string> withoutObject, refused;
  for (const std::string &module : request.Order) {
    std::string object = stagedObjectPath(request.OutputDir, module);
    objects.push_back(object);
    auto fd = openRegularFileBeneath(request.OutputDir, stagedObjectName(module));
    if (!fd) {
      llvm::Error error = fd.takeError();
      if (consumeIfMissing(error))
        withoutObject.push_back(module);
      else
        refused.push_back(module + " (" + llvm::toString(std::move(error)) + ")");
      continue;
    }
    auto directives = linkDirectives(fd->get(), object);
    if (!directives) {
      refused.push_back(module + " (" + llvm::toString(directives.takeError()) + ")");
      continue;
    }
    if (!directives->empty()) {
      std::string list;
      for (const std::string &d : *directives)
        list += (list.empty() ? "" : "; ") + d;
      refused.push_back(module + " (its object holds what the link refuses: " + list +
                        "; never linked, docs/security.md#the-link-step)");
    }
  }
  result.Objects = objects.size();
  if (!request.NotOk.empty()) {
    result.ModulesNotLinkable = request.NotOk;
    result.Reason = std::to_string(request.NotOk.size()) +
                    " module(s) did not compile, so the program cannot be "
                    "linked as the build linked it (a partial link would mislead)";
    return result;
  }
  if (!refused.empty()) {
    result.ModulesNotLinkable = refused;
    result.Reason = std::to_string(refused.size()) + " module(s) have an object the link refuses";
    return result;
  }
  if (!withoutObject.empty()) {
    result.ModulesNotLinkable = withoutObject;
    result.Reason = std::to_string(withoutObject.size()) + " module(s) have no object to link";
    return result;
  }
  for (const std::string &extra : settings.ExtraObjects)
    if (!llvm::sys::fs::is_regular_file(extra)) {
      result.Reason = "--link_extra: " + extra + " is not a file";
      return result;
    }
  if (request.Order.empty()) {
    result.Reason = "no module to link";
    return result;
  }
  objects.insert(objects.end(), settings.ExtraObjects.begin(), settings.ExtraObjects.end());

  // A fresh directory: the linker may write only here (its output and
  // temporary files), so it is the confinement's root.
  // (Made afresh each time: the directory was just removed, and
  // ensureDirectory remembers what it made in this process.)
  if (llvm::Error e = makeDirectoriesBeneath(request.OutputDir, "link")) {
    result.Status = "failed";
    result.Reason = "cannot create " + linkDir + ": " + llvm::toString(std::move(e));
    return result;
  }
  result.Command = linkCommand(settings.Words, objects, result.Output);
  auto start = std::chrono::steady_clock::now();
  CompileJob job{result.Command,
                 joinPath(linkDir, "link.stderr"),
                 start + std::chrono::milliseconds(static_cast<int64_t>(settings.TimeoutSeconds * 1000)),
                 settings.TimeoutSeconds,
                 linkDir,
                 request.AlsoWritable};
  // Reads confined to an allow-list (LinkInputs.h), memory bounded.
  job.ReadExec = linkReadExecRules(settings, joinPath(joinPath(request.OutputDir, ".mlgo-harvest"), "objects"),
                                   request.AlsoReadable);
  job.MemoryLimitBytes = settings.MemoryLimitMiB << 20;
  CompileOutcome outcome = runCompile(job);
  result.Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.ExitStatus = outcome.Exit ? outcome.Exit->describe() : "";
  result.StderrTail = outcome.StderrTail;
  if (outcome.Result != CompileOutcome::Status::Ok) {
    result.Status = outcome.Result == CompileOutcome::Status::Timeout       ? "timeout"
                    : outcome.Result == CompileOutcome::Status::Interrupted ? "not_attempted"
                                                                            : "failed";
    result.Reason = outcome.Result == CompileOutcome::Status::Timeout
                        ? "the linker was killed after " + std::to_string(static_cast<int>(settings.TimeoutSeconds)) +
                              " s (--link_timeout)"
                        : outcome.Detail;
    // The failures we can foresee: llc's static relocation model in a PIE
    // link (docs/harvest-linking.md#linked-size), and the memory bound.
    llvm::StringRef tail = result.StderrTail;
    if (tail.contains("recompile with -fPIC"))
      result.Reason += "; in opt mode llc-22 compiles with the static relocation model, so link with -no-pie";
    if (settings.MemoryLimitMiB &&
        (tail.contains_insensitive("out of memory") || tail.contains("Cannot allocate memory") ||
         tail.contains("bad_alloc") || tail.contains("MemoryError")))
      result.Reason += "; the linker ran out of the memory it may use (--link_memory_limit=" +
                       std::to_string(settings.MemoryLimitMiB) + " MiB)";
    if (tail.contains("Permission denied"))
      result.Reason += "; the linker may read only the objects, its toolchain, the system's libraries, --link_extra, "
                       "what the template names and --compiler_readable_dir (docs/security.md)";
    return result;
  }
  auto sizes = berkeleySizes(result.Output);
  if (!sizes) {
    result.Status = "failed";
    result.Reason = "the linker made no readable binary: " + llvm::toString(sizes.takeError());
    return result;
  }
  result.Sizes = *sizes;
  result.Status = "ok";
  if (!settings.KeepObjects)
    for (const std::string &module : request.Order)
      llvm::consumeError(removeBeneath(request.OutputDir, stagedObjectName(module)));
  return result;
}

} // namespace mlgo
