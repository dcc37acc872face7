#include "mlgo/policy/InlineDecisions.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace mlgo {
namespace {

using Json = nlohmann::ordered_json;

llvm::Error invalid(const std::string &message) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "%s", message.c_str());
}

llvm::Error exactKeys(const Json &value, std::initializer_list<const char *> keys, const std::string &where,
                      const char *what) {
  for (const char *key : keys)
    if (!value.contains(key))
      return invalid(where + ": key '" + key + "' is missing");
  for (const auto &item : value.items())
    if (std::none_of(keys.begin(), keys.end(), [&](const char *k) { return item.key() == k; }))
      return invalid(where + ": key '" + item.key() + "' is not a key of " + what);
  return llvm::Error::success();
}

llvm::Expected<ModuleDecisions> moduleFromJson(const Json &value, const std::string &where) {
  if (!value.is_object())
    return invalid(where + ": not a JSON object");
  if (llvm::Error e = exactKeys(value, {"module", "source_filename", "decisions"}, where, "a module's decisions"))
    return std::move(e);
  ModuleDecisions module;
  if (!value["module"].is_string() || value["module"].get_ref<const std::string &>().empty())
    return invalid(where + ": 'module' must be a non-empty string");
  module.Module = value["module"].get<std::string>();
  if (!value["source_filename"].is_string())
    return invalid(where + ": 'source_filename' must be a string");
  module.SourceFileName = value["source_filename"].get<std::string>();
  const Json &list = value["decisions"];
  if (!list.is_array())
    return invalid(where + ": 'decisions' must be an array");
  std::set<std::tuple<std::string, std::string, uint64_t>> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json &d = list[i];
    std::string at = where + ": decision " + std::to_string(i);
    if (!d.is_object())
      return invalid(at + ": not a JSON object");
    if (llvm::Error e = exactKeys(d, {"caller", "callee", "site", "inline"}, at, "a decision"))
      return std::move(e);
    if (!d["caller"].is_string() || !d["callee"].is_string())
      return invalid(at + ": 'caller' and 'callee' must be strings");
    if (!d["site"].is_number_unsigned())
      return invalid(at + ": 'site' must be a non-negative integer");
    if (!d["inline"].is_boolean())
      return invalid(at + ": 'inline' must be true or false");
    SiteDecision decision{d["caller"].get<std::string>(), d["callee"].get<std::string>(), d["site"].get<uint64_t>(),
                          d["inline"].get<bool>()};
    if (!seen.emplace(decision.Caller, decision.Callee, decision.Site).second)
      return invalid(at + ": the site (caller '" + decision.Caller + "', callee '" + decision.Callee + "', site " +
                     std::to_string(decision.Site) + ") is listed twice");
    module.Decisions.push_back(std::move(decision));
  }
  return module;
}

// A path without its leading "./" and "../" components: how two builds run
// from different directories may name the same source file.
llvm::StringRef withoutLeadingDots(llvm::StringRef path) {
  while (path.consume_front("./") || path.consume_front("../"))
    ;
  return path;
}

// Whether one path is the other's trailing components.
bool pathSuffixMatch(llvm::StringRef a, llvm::StringRef b) {
  a = withoutLeadingDots(a);
  b = withoutLeadingDots(b);
  if (a.empty() || b.empty())
    return false;
  if (a.size() < b.size())
    std::swap(a, b);
  return a == b || (a.ends_with(b) && a[a.size() - b.size() - 1] == '/');
}

} // namespace

llvm::Expected<std::vector<ModuleDecisions>> parseInlineDecisions(llvm::StringRef text, llvm::StringRef pathRef,
                                                                  const InlineDecisionsLimits &limits) {
  std::string path = pathRef.str();
  if (text.size() > limits.MaxFileBytes)
    return invalid(path + ": " + std::to_string(text.size()) + " bytes, more than the " +
                   std::to_string(limits.MaxFileBytes) + " a decisions file may have");
  std::vector<ModuleDecisions> modules;
  std::map<std::string, size_t> moduleLine, sourceLine;
  llvm::StringRef rest = text;
  for (size_t number = 1; !rest.empty(); ++number) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    std::string where = path + " line " + std::to_string(number);
    if (line.size() > limits.MaxLineBytes)
      return invalid(where + ": longer than " + std::to_string(limits.MaxLineBytes) + " bytes");
    if (line.trim().empty())
      continue;
    Json value = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded())
      return invalid(where + ": not JSON (or not UTF-8)");
    auto module = moduleFromJson(value, where);
    if (!module)
      return module.takeError();
    if (auto [it, isNew] = moduleLine.emplace(module->Module, number); !isNew)
      return invalid(where + ": module " + module->Module + " is already on line " + std::to_string(it->second));
    if (!module->SourceFileName.empty())
      if (auto [it, isNew] = sourceLine.emplace(module->SourceFileName, number); !isNew)
        return invalid(where + ": source file " + module->SourceFileName + " is already on line " +
                       std::to_string(it->second));
    modules.push_back(std::move(*module));
  }
  return modules;
}

llvm::Expected<std::vector<ModuleDecisions>> readInlineDecisions(llvm::StringRef pathRef,
                                                                 const InlineDecisionsLimits &limits) {
  std::string path = pathRef.str();
  // Without blocking on a FIFO, and never more than the bound.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "cannot open %s: %s", path.c_str(),
                                   std::strerror(errno));
  struct Closer {
    int Fd;
    ~Closer() { ::close(Fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return invalid(path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > limits.MaxFileBytes)
    return invalid(path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                   std::to_string(limits.MaxFileBytes) + " a decisions file may have");
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return llvm::createStringError(std::error_code(errno, std::generic_category()), "cannot read %s: %s",
                                     path.c_str(), std::strerror(errno));
    if (got == 0)
      break;
    if (text.size() + static_cast<size_t>(got) > limits.MaxFileBytes)
      return invalid(path + ": the file grew past " + std::to_string(limits.MaxFileBytes) + " bytes");
    text.append(chunk, static_cast<size_t>(got));
  }
  return parseInlineDecisions(text, path, limits);
}

std::string inlineDecisionsLine(const ModuleDecisions &module) {
  Json line;
  line["module"] = module.Module;
  line["source_filename"] = module.SourceFileName;
  Json decisions = Json::array();
  for (const SiteDecision &d : module.Decisions)
    decisions.push_back(Json{{"caller", d.Caller}, {"callee", d.Callee}, {"site", d.Site}, {"inline", d.Inline}});
  line["decisions"] = std::move(decisions);
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

const ModuleDecisions *findModuleDecisions(const std::vector<ModuleDecisions> &modules, llvm::StringRef name,
                                           std::string &why) {
  for (const ModuleDecisions &m : modules)
    if (!m.SourceFileName.empty() && m.SourceFileName == name)
      return &m;
  for (const ModuleDecisions &m : modules)
    if (m.Module == name)
      return &m;
  const ModuleDecisions *found = nullptr;
  size_t matches = 0;
  for (const ModuleDecisions &m : modules)
    if (pathSuffixMatch(m.SourceFileName, name)) {
      found = &m;
      ++matches;
    }
  if (matches == 1)
    return found;
  why = matches == 0 ? "no module of the file is " + name.str()
                     : std::to_string(matches) + " modules' source files end in " + name.str() + " (ambiguous)";
  return nullptr;
}

} // namespace mlgo
