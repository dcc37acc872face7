#include "mlgo/corpus/CorpusValidator.h"
#include "mlgo/support/Version.h"

#include "mlgo/corpus/BitcodeCheck.h"
#include "mlgo/corpus/CommandLineSection.h"
#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/corpus/ModuleCommandLine.h"
#include "mlgo/corpus/ModuleNaming.h"
#include "mlgo/support/DirectoryWalk.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <map>
#include <set>
#include <thread>

namespace mlgo {
namespace {

struct ModuleCheck {
  ModuleFacts Facts;
  std::vector<CorpusProblem> Problems;
};

std::unique_ptr<llvm::MemoryBuffer> openFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  return buffer ? std::move(*buffer) : nullptr;
}

// Why `name` cannot be a module of this corpus; empty when it can. Beyond the
// shared rule, a name ending in .bc would make its file `x.bc.bc`.
std::string badNameReason(const std::string &name) {
  if (llvm::Error e = checkModuleName(name))
    return llvm::toString(std::move(e));
  if (llvm::StringRef(name).ends_with(".bc"))
    return "module name '" + name + "' ends in .bc: names omit the .bc of their file";
  return "";
}

ModuleCheck checkModule(const std::string &dir, const std::string &name, bool needCmd, bool needIndex,
                        const std::string &clangPath) {
  ModuleCheck check;
  check.Facts.Name = name;
  auto problem = [&](const char *code, std::string detail) {
    check.Problems.push_back({code, name, std::move(detail)});
  };
  std::string base = joinPath(dir, name);
  if (auto bitcode = openFile(base + ".bc")) {
    llvm::StringRef bytes = bitcode->getBuffer();
    check.Facts.BitcodeSize = bytes.size();
    check.Facts.Hash = llvm::xxh3_64bits(bytes);
    if (llvm::Error e = checkBitcode(bytes)) {
      problem("invalid_bitcode", name + ".bc: " + llvm::toString(std::move(e)));
    } else {
      llvm::MemoryBufferRef ref(bytes, name);
      if (auto producer = llvm::getBitcodeProducerString(ref))
        check.Facts.Producer = *producer;
      else
        llvm::consumeError(producer.takeError());
      if (auto triple = llvm::getBitcodeTargetTriple(ref))
        check.Facts.Triple = *triple;
      else
        llvm::consumeError(triple.takeError());
      if (auto directives = linkerDirectives(bytes); !directives)
        problem("invalid_bitcode", name + ".bc: " + llvm::toString(directives.takeError()));
      else if (!directives->empty())
        problem("linker_directives",
                name + ".bc asks the linker to read files it names: " + llvm::join(*directives, "; ") +
                    " (harvest-logs --link refuses its object: docs/security.md)");
    }
  } else {
    problem("missing_bc", name + ".bc does not exist or cannot be read");
  }

  if (needCmd) {
    if (auto cmd = openFile(base + ".cmd")) {
      llvm::StringRef bytes = cmd->getBuffer();
      std::vector<llvm::StringRef> fields = splitCommandLineSection(bytes);
      if (!bytes.ends_with(llvm::StringRef("\0", 1)))
        problem("cmd_not_nul_separated", name + ".cmd does not end with a NUL byte: not a NUL-separated cc1 line");
      if (!llvm::json::isUTF8(bytes))
        problem("cmd_not_utf8", name + ".cmd is not UTF-8 (ml-compiler-opt reads it as text)");
      if (fields.empty() || fields.front() != "-cc1")
        problem("cmd_not_cc1", name + ".cmd does not start with -cc1");
      // Screened as harvest-logs screens the line it would run (a driver
      // line too, through the cc1 job it makes).
      std::vector<std::string> args(fields.begin(), fields.end());
      auto line = screenedCompileLine(dropHarvestFlags(args), name + ".cmd", clangPath, base + ".bc");
      if (!line)
        llvm::handleAllErrors(line.takeError(), [&](const UnsafeCommandLineError &e) {
          problem("unsafe_command_line", name + ".cmd: " + e.Flag);
        });
      if (needIndex) {
        size_t indexOptions = 0;
        for (llvm::StringRef f : fields)
          indexOptions += f.starts_with("-fthinlto-index");
        if (indexOptions != 1)
          problem("cmd_thinlto_index", name + ".cmd has " + std::to_string(indexOptions) +
                                           " -fthinlto-index options; a ThinLTO corpus needs exactly one");
      }
    } else {
      problem("missing_cmd", name + ".cmd does not exist (and there is no global_command_override)");
    }
  }
  if (needIndex && !openFile(base + ".thinlto.bc"))
    problem("missing_thinlto", name + ".thinlto.bc does not exist (has_thinlto is true)");
  return check;
}

} // namespace

CorpusValidation validateCorpus(llvm::StringRef dir, unsigned workers, const std::string &clangPath) {
  CorpusValidation v;
  v.Directory = dir.str();
  auto description = readCorpusDescription(dir);
  if (!description) {
    v.Problems.push_back({"description_invalid", "", llvm::toString(description.takeError())});
    return v;
  }
  const nlohmann::ordered_json &fields = description->Fields;
  auto thinlto = fields.find("has_thinlto");
  if (thinlto == fields.end() || !thinlto->is_boolean())
    v.Problems.push_back({"has_thinlto_missing", "",
                          "\"has_thinlto\" is missing or not a boolean; "
                          "ml-compiler-opt's loader requires it"});
  else
    v.HasThinLTO = thinlto->get<bool>();
  if (auto override = fields.find("global_command_override"); override != fields.end()) {
    v.HasOverride = true;
    bool strings = override->is_array();
    for (const auto &arg : *override)
      strings = strings && arg.is_string();
    if (!strings)
      v.Problems.push_back({"override_invalid", "", "\"global_command_override\" is not a list of strings"});
    else if (*override == nlohmann::ordered_json::array({"<UNSPECIFIED>"}))
      v.Problems.push_back({"override_unspecified", "",
                            "global_command_override is still [\"<UNSPECIFIED>\"]: replace it with the link's flags"});
    else if (auto line = screenedCompileLine(override->get<std::vector<std::string>>(), "global_command_override",
                                             clangPath, joinPath(dir, "module.bc"));
             !line)
      llvm::handleAllErrors(line.takeError(), [&](const UnsafeCommandLineError &e) {
        v.Problems.push_back({"unsafe_command_line", "", "global_command_override: " + e.Flag});
      });
  }
  if (description->Modules.empty())
    v.Problems.push_back({"modules_empty", "", "the corpus lists no module; ml-compiler-opt cannot use it"});

  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const std::string &name : description->Modules) {
    if (std::string reason = badNameReason(name); !reason.empty()) {
      v.Problems.push_back({"bad_module_name", name, std::move(reason)});
      continue;
    }
    if (!seen.insert(name).second) {
      v.Problems.push_back({"duplicate_module_name", name, "listed more than once"});
      continue;
    }
    names.push_back(name);
  }

  std::vector<ModuleCheck> checks(names.size());
  unsigned threads = workers ? workers : std::max(1u, std::thread::hardware_concurrency());
  tbb::task_arena arena(static_cast<int>(threads));
  arena.execute([&] {
    tbb::parallel_for(size_t(0), names.size(), [&](size_t i) {
      checks[i] = checkModule(v.Directory, names[i], !v.HasOverride, v.HasThinLTO, clangPath);
    });
  });
  std::map<std::pair<uint64_t, uint64_t>, std::vector<std::string>> byContent;
  for (ModuleCheck &check : checks) {
    for (CorpusProblem &p : check.Problems)
      v.Problems.push_back(std::move(p));
    if (check.Facts.BitcodeSize)
      byContent[{check.Facts.Hash, check.Facts.BitcodeSize}].push_back(check.Facts.Name);
    v.Modules.push_back(std::move(check.Facts));
  }
  for (auto &[key, group] : byContent)
    if (group.size() > 1)
      v.Duplicates.push_back(std::move(group));

  // Module files that no listed module accounts for.
  std::set<std::string> listed(description->Modules.begin(), description->Modules.end());
  llvm::Error walked = walkMatching(dir, {".bc", ".cmd"}, [&](const WalkEntry &entry) {
    llvm::StringRef rel = entry.Relative;
    if (entry.IsDirectory || rel.starts_with(".mlgo-corpus/") || rel.contains("/.mlgo-corpus/"))
      return;
    bool accounted = false;
    for (llvm::StringRef suffix : {".thinlto.bc", ".bc", ".cmd"})
      if (rel.ends_with(suffix))
        accounted = accounted || listed.count(rel.drop_back(suffix.size()).str());
    if (!accounted)
      v.Problems.push_back({"stray_file", "", rel.str() + " belongs to no listed module"});
  });
  if (walked)
    v.Problems.push_back({"description_invalid", "", llvm::toString(std::move(walked))});
  return v;
}

nlohmann::ordered_json CorpusValidation::toJson() const {
  nlohmann::ordered_json out;
  out["mlgo_version"] = versionString();
  out["corpus"] = Directory;
  out["sound"] = sound();
  out["has_thinlto"] = HasThinLTO;
  out["global_command_override"] = HasOverride;
  uint64_t total = 0;
  std::map<std::string, size_t> producers, triples;
  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  for (const ModuleFacts &m : Modules) {
    total += m.BitcodeSize;
    ++producers[m.Producer];
    ++triples[m.Triple];
    char hash[17];
    std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(m.Hash));
    modules.push_back(
        {{"name", m.Name}, {"size", m.BitcodeSize}, {"producer", m.Producer}, {"triple", m.Triple}, {"hash", hash}});
  }
  out["totals"] = {{"modules", Modules.size()},
                   {"bitcode_bytes", total},
                   {"problems", Problems.size()},
                   {"duplicate_groups", Duplicates.size()}};
  out["producers"] = producers;
  out["triples"] = triples;
  out["modules"] = std::move(modules);
  out["duplicates"] = Duplicates;
  nlohmann::ordered_json problems = nlohmann::ordered_json::array();
  for (const CorpusProblem &p : Problems)
    problems.push_back({{"code", p.Code}, {"module", p.Module}, {"detail", p.Detail}});
  out["problems"] = std::move(problems);
  return out;
}

std::string CorpusValidation::toText(bool listModules) const {
  std::string out = "corpus: " + Directory + "\n";
  uint64_t total = 0;
  std::map<std::string, size_t> producers, triples;
  for (const ModuleFacts &m : Modules) {
    total += m.BitcodeSize;
    ++producers[m.Producer.empty() ? "(unknown)" : m.Producer];
    ++triples[m.Triple.empty() ? "(unknown)" : m.Triple];
  }
  out += "modules: " + std::to_string(Modules.size()) + ", " + std::to_string(total) +
         " bytes of bitcode, has_thinlto: " + (HasThinLTO ? "true" : "false") +
         ", global_command_override: " + (HasOverride ? "yes" : "no") + "\n";
  auto counts = [](const std::map<std::string, size_t> &m) {
    std::string s;
    for (const auto &[k, n] : m)
      s += (s.empty() ? "" : ", ") + k + " (" + std::to_string(n) + ")";
    return s.empty() ? std::string("none") : s;
  };
  out += "producers: " + counts(producers) + "\n";
  out += "targets: " + counts(triples) + "\n";
  if (listModules)
    for (const ModuleFacts &m : Modules)
      out += "  " + m.Name + "  " + std::to_string(m.BitcodeSize) + " bytes  " + m.Producer + "  " + m.Triple + "\n";
  for (const auto &group : Duplicates) {
    std::string names;
    for (const std::string &n : group)
      names += (names.empty() ? "" : ", ") + n;
    out += "duplicate bitcode: " + names + "\n";
  }
  for (const CorpusProblem &p : Problems)
    out += "problem: " + p.Code + (p.Module.empty() ? "" : " [" + p.Module + "]") + ": " + p.Detail + "\n";
  out += sound() ? "result: sound\n" : "result: NOT sound (" + std::to_string(Problems.size()) + " problems)\n";
  return out;
}

} // namespace mlgo
