#include "mlgo/policy/InProcessPolicy.h"

#include <map>
#include <mutex>

namespace mlgo {
namespace {

struct Entry {
  std::string Usage;
  InProcessPolicyFactory Factory;
};

// A function-local static: registrations run during static initialization,
// in any order across files.
std::map<std::string, Entry> &registry() {
  static std::map<std::string, Entry> Registry;
  return Registry;
}

} // namespace

std::optional<size_t> InProcessQuery::find(llvm::StringRef name) const {
  for (size_t i = 0; i < Specs.size(); ++i)
    if (Specs[i].Name == name)
      return i;
  return std::nullopt;
}

void registerInProcessPolicy(std::string name, std::string usage, InProcessPolicyFactory factory) {
  registry()[std::move(name)] = {std::move(usage), std::move(factory)};
}

std::string inProcessPolicyUsage() {
  std::string usage;
  for (const auto &[name, entry] : registry())
    usage += "  " + entry.Usage + "\n";
  return usage;
}

llvm::Expected<std::unique_ptr<InProcessPolicy>> makeInProcessPolicy(llvm::StringRef spec) {
  auto [name, argument] = spec.split(':');
  auto it = registry().find(name.str());
  if (it == registry().end())
    return llvm::createStringError("unknown in-process inlining policy '%s'; the plugin knows:\n%s", spec.str().c_str(),
                                   inProcessPolicyUsage().c_str());
  return it->second.Factory(argument);
}

} // namespace mlgo
