#include "mlgo/log/DecisionSites.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace mlgo {
namespace {

using Json = nlohmann::ordered_json;

llvm::Error invalid(const std::string &message) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "%s", message.c_str());
}

const char *typeName(const Json &value) {
  if (value.is_number_unsigned())
    return "a non-negative integer";
  if (value.is_number_integer())
    return "a negative integer";
  if (value.is_number_float())
    return "a fractional number";
  return value.type_name();
}

std::string wrongType(llvm::StringRef where, const char *key, const char *expected, const Json &value) {
  return where.str() + ": key '" + key + "' is not " + expected + " (it is " + typeName(value) + ")";
}

// Calls `onLine(text, number)` for each line of the file at `fd`, reading a
// bounded chunk at a time: no line may exceed limits.MaxLineBytes. A final
// line without '\n' is a line too.
llvm::Error forEachLine(int fd, const std::string &path, const DecisionSitesLimits &limits,
                        const std::function<llvm::Error(llvm::StringRef, size_t)> &onLine) {
  std::string line;
  size_t number = 1;
  char chunk[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return llvm::createStringError(std::error_code(errno, std::generic_category()), "cannot read %s: %s",
                                     path.c_str(), std::strerror(errno));
    }
    if (got == 0)
      break;
    llvm::StringRef data(chunk, static_cast<size_t>(got));
    while (!data.empty()) {
      size_t end = data.find('\n');
      llvm::StringRef piece = data.take_front(end);
      if (line.size() + piece.size() > limits.MaxLineBytes)
        return invalid(path + " line " + std::to_string(number) + ": longer than " +
                       std::to_string(limits.MaxLineBytes) + " bytes");
      line.append(piece.data(), piece.size());
      if (end == llvm::StringRef::npos)
        break;
      data = data.drop_front(end + 1);
      if (llvm::Error e = onLine(line, number))
        return e;
      line.clear();
      ++number;
    }
  }
  if (!line.empty())
    return onLine(line, number);
  return llvm::Error::success();
}

} // namespace

Json DecisionSite::toJson() const {
  Json j;
  j["caller"] = Caller;
  j["callee"] = Callee;
  j["site"] = Site;
  j["loc"] = Location ? Json(*Location) : Json();
  j["default"] = Default;
  j["decision"] = Decision;
  if (HasCostMargin)
    j["cost_margin"] = CostMargin ? Json(*CostMargin) : Json();
  if (HasReplayLocation)
    j["replay_loc"] = ReplayLocation ? Json(*ReplayLocation) : Json();
  return j;
}

llvm::Expected<DecisionSite> decisionSiteFromJson(const Json &value, llvm::StringRef where) {
  if (!value.is_object())
    return invalid(where.str() + ": not a JSON object (it is " + typeName(value) + ")");
  static const char *const Keys[] = {"caller", "callee", "site", "loc", "default", "decision"};
  static const char *const Optional = "cost_margin", *const OptionalReplay = "replay_loc"; // newer than the others
  for (const char *key : Keys)
    if (!value.contains(key))
      return invalid(where.str() + ": key '" + key + "' is missing");
  for (const auto &[key, unused] : value.items())
    if (key != Optional && key != OptionalReplay &&
        std::find_if(std::begin(Keys), std::end(Keys), [&](const char *k) { return key == k; }) == std::end(Keys))
      return invalid(where.str() + ": key '" + key + "' is not a key of a decision site");
  DecisionSite site;
  for (auto [key, out] : {std::pair{"caller", &site.Caller}, std::pair{"callee", &site.Callee}}) {
    const Json &v = value[key];
    if (!v.is_string())
      return invalid(wrongType(where, key, "a string", v));
    *out = v.get<std::string>();
  }
  const Json &ordinal = value["site"];
  if (!ordinal.is_number_unsigned())
    return invalid(wrongType(where, "site", "a non-negative integer", ordinal));
  site.Site = ordinal.get<uint64_t>();
  const Json &loc = value["loc"];
  if (loc.is_string())
    site.Location = loc.get<std::string>();
  else if (!loc.is_null())
    return invalid(wrongType(where, "loc", "a string or null", loc));
  for (auto [key, out] : {std::pair{"default", &site.Default}, std::pair{"decision", &site.Decision}}) {
    const Json &v = value[key];
    if (!v.is_boolean())
      return invalid(wrongType(where, key, "a boolean", v));
    *out = v.get<bool>();
  }
  if (value.contains(Optional)) {
    const Json &margin = value[Optional];
    site.HasCostMargin = true;
    if (margin.is_number_integer())
      site.CostMargin = margin.get<int64_t>();
    else if (!margin.is_null())
      return invalid(wrongType(where, Optional, "an integer or null", margin));
  }
  if (value.contains(OptionalReplay)) {
    const Json &replay = value[OptionalReplay];
    site.HasReplayLocation = true;
    if (replay.is_string())
      site.ReplayLocation = replay.get<std::string>();
    else if (!replay.is_null())
      return invalid(wrongType(where, OptionalReplay, "a string or null", replay));
  }
  return site;
}

llvm::Expected<std::vector<DecisionSite>> readDecisionSites(llvm::StringRef pathRef,
                                                            const DecisionSitesLimits &limits) {
  std::string path = pathRef.str();
  // Not through a symbolic link (a harvest is someone else's directory: the
  // link could name any file), and without blocking on a FIFO.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return errno == ELOOP ? invalid(path + ": a symbolic link, not a sites file")
                          : llvm::createStringError(std::error_code(errno, std::generic_category()),
                                                    "cannot open %s: %s", path.c_str(), std::strerror(errno));
  struct Closer {
    int Fd;
    ~Closer() { ::close(Fd); }
  } closer{fd};
  return readDecisionSites(fd, path, limits);
}

llvm::Expected<std::vector<DecisionSite>> readDecisionSites(int fd, llvm::StringRef pathRef,
                                                            const DecisionSitesLimits &limits) {
  std::string path = pathRef.str();
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "cannot stat %s: %s", path.c_str(),
                                   std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return invalid(path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > limits.MaxFileBytes)
    return invalid(path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                   std::to_string(limits.MaxFileBytes) + " a sites file may have");

  std::vector<DecisionSite> sites;
  std::map<std::tuple<std::string, std::string, uint64_t>, size_t> lineOf;
  uint64_t total = 0;
  llvm::Error e = forEachLine(fd, path, limits, [&](llvm::StringRef text, size_t number) -> llvm::Error {
    std::string where = path + " line " + std::to_string(number);
    // The file may grow while it is read: the bound holds for what is read.
    total += text.size() + 1;
    if (total > limits.MaxFileBytes + 1)
      return invalid(where + ": the file grew past " + std::to_string(limits.MaxFileBytes) + " bytes");
    Json value;
    try {
      value = Json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::exception &ex) {
      return invalid(where + ": not JSON (" + ex.what() + ")");
    }
    auto site = decisionSiteFromJson(value, where);
    if (!site)
      return site.takeError();
    auto [it, isNew] = lineOf.emplace(std::tuple{site->Caller, site->Callee, site->Site}, number);
    if (!isNew)
      return invalid(where + ": the site (caller '" + site->Caller + "', callee '" + site->Callee + "', site " +
                     std::to_string(site->Site) + ") is already on line " + std::to_string(it->second));
    sites.push_back(std::move(*site));
    return llvm::Error::success();
  });
  if (e)
    return std::move(e);
  return sites;
}

} // namespace mlgo
