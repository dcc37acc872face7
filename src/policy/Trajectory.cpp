#include "mlgo/policy/Trajectory.h"

#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

namespace mlgo {

llvm::Error parseTrajectoryLine(llvm::StringRef line, llvm::StringRef where, std::string &module,
                                Trajectory &trajectory) {
  DecisionSequence &decisions = trajectory.Recorded;
  auto fail = [&](const std::string &what) {
    return llvm::createStringError("%s: %s", where.str().c_str(), what.c_str());
  };
  nlohmann::json value = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object())
    return fail("not a JSON object");
  auto name = value.find("module");
  if (name == value.end() || !name->is_string() || name->get_ref<const std::string &>().empty())
    return fail("`module` must be a non-empty string");
  auto list = value.find("decisions");
  if (list == value.end() || !list->is_array())
    return fail("`decisions` must be an array of 0 and 1");
  module = name->get<std::string>();
  decisions.clear();
  decisions.reserve(list->size());
  for (const auto &d : *list) {
    if (!d.is_number_integer() || (d.get<int64_t>() != 0 && d.get<int64_t>() != 1))
      return fail("`decisions` of " + module + " holds " + d.dump() + ": each decision must be 0 or 1");
    decisions.push_back(d.get<int64_t>() == 1);
  }
  trajectory.Then.clear();
  if (auto then = value.find("then"); then != value.end()) {
    // Which model or command it may name is the replaying host's check (the run's own only).
    auto is = [&](const char *prefix) { return then->get_ref<const std::string &>().starts_with(prefix); };
    if (!then->is_string() || (*then != "default" && !is("random:") && !is("tflite:") && !is("exec:")))
      return fail("`then` of " + module + " must be \"default\", \"random:P:SEED\", \"tflite:DIR\" or \"exec:CMD\"");
    trajectory.Then = then->get<std::string>();
  }
  return llvm::Error::success();
}

llvm::Expected<TrajectorySet> readTrajectories(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read %s: %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  TrajectorySet set;
  llvm::StringRef rest = (*buffer)->getBuffer();
  for (size_t number = 1; !rest.empty(); ++number) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    if (line.trim().empty())
      continue;
    std::string where = path.str() + " line " + std::to_string(number), module;
    Trajectory trajectory;
    if (llvm::Error e = parseTrajectoryLine(line, where, module, trajectory))
      return std::move(e);
    if (!set.emplace(module, std::move(trajectory)).second)
      return llvm::createStringError("%s: module %s is listed twice", where.c_str(), module.c_str());
  }
  return set;
}

std::string trajectoryLine(llvm::StringRef module, const DecisionSequence &decisions, llvm::StringRef then) {
  std::string line = nlohmann::json(module.str()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line = "{\"module\":" + line + ",\"decisions\":[";
  for (size_t i = 0; i < decisions.size(); ++i) {
    if (i)
      line += ',';
    line += decisions[i] ? '1' : '0';
  }
  line += ']';
  if (!then.empty())
    line += ",\"then\":" + nlohmann::json(then.str()).dump();
  return line + "}\n";
}

std::optional<std::string> replayMismatch(llvm::StringRef module, const Trajectory &trajectory, size_t asked) {
  size_t recorded = trajectory.Recorded.size();
  if (asked == recorded || (asked > recorded && !trajectory.Then.empty()))
    return std::nullopt;
  return replayLengthMismatch(module, recorded, asked);
}

std::string replayLengthMismatch(llvm::StringRef module, size_t recorded, size_t asked) {
  return "replay: the recorded trajectory of " + module.str() + " has " + std::to_string(recorded) +
         " decisions and the compile asked for " + (asked > recorded ? "more" : std::to_string(asked)) +
         " (the module, compiler or options differ from the recorded harvest's)";
}

llvm::Expected<const Trajectory *> trajectoryOf(const TrajectorySet &set, llvm::StringRef path,
                                                llvm::StringRef module) {
  auto it = set.find(module.str());
  if (it == set.end())
    return llvm::createStringError("replay: %s has no trajectory for module %s", path.str().c_str(),
                                   module.str().c_str());
  return &it->second;
}

llvm::Error ReplayCursor::begin(const TrajectorySet &set, llvm::StringRef path, llvm::StringRef module) {
  Followed = nullptr;
  auto followed = trajectoryOf(set, path, module);
  if (!followed)
    return followed.takeError();
  Followed = *followed;
  Module = module.str();
  Next = 0;
  return llvm::Error::success();
}

llvm::Expected<std::optional<bool>> ReplayCursor::next() {
  size_t step = Next++;
  if (step < Followed->Recorded.size())
    return std::optional<bool>(Followed->Recorded[step]);
  if (!Followed->Then.empty())
    return std::optional<bool>();
  return llvm::createStringError("%s", replayLengthMismatch(Module, Followed->Recorded.size(), step + 1).c_str());
}

} // namespace mlgo
