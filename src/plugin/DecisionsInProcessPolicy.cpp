// decisions:FILE inside the compiler: the exported decisions of a harvest
// (export-decisions, InlineDecisions.h), applied by call site in the user's
// own build; every site the file does not name follows the default
// heuristic. An exported decision whose site this compile never reached (the
// code changed) is reported once, on stderr, and has no effect.
#include "mlgo/policy/InProcessPolicy.h"
#include "mlgo/policy/InlineDecisions.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <tuple>

namespace mlgo {
namespace {

class ExportedDecisions : public InProcessPolicy {
public:
  ExportedDecisions(std::string path, std::vector<ModuleDecisions> modules)
      : Path(std::move(path)), Modules(std::move(modules)) {}

  llvm::Error beginModule(llvm::StringRef module, llvm::ArrayRef<TensorSpec>) override {
    ByKey.clear();
    Reported = false;
    Module = module.str();
    std::string why;
    const ModuleDecisions *own = findModuleDecisions(Modules, module, why);
    if (!own) {
      llvm::errs() << "warning: libMLGOInlineAdvisor: decisions:" << Path << ": " << why
                   << "; this module follows the default heuristic\n";
      return llvm::Error::success();
    }
    for (const SiteDecision &d : own->Decisions)
      ByKey.emplace(std::tuple{d.Caller, d.Callee, d.Site}, Entry{d.Inline, false});
    return llvm::Error::success();
  }

  bool usesCallSites() const override { return true; }

  llvm::Expected<bool> decide(const InProcessQuery &query, llvm::MutableArrayRef<std::string>) override {
    if (!query.Site)
      return llvm::createStringError("decisions:FILE needs each decision's call site");
    auto it = ByKey.find(std::tuple{query.Site->Caller.str(), query.Site->Callee.str(), query.Site->Site});
    if (it == ByKey.end())
      return query.DefaultDecision;
    it->second.Reached = true;
    return it->second.Inline;
  }

  void endModule() override {
    if (Reported)
      return;
    Reported = true;
    size_t missed = 0;
    const std::tuple<std::string, std::string, uint64_t> *first = nullptr;
    for (const auto &[key, entry] : ByKey)
      if (!entry.Reached && ++missed == 1)
        first = &key;
    if (missed)
      llvm::errs() << "warning: libMLGOInlineAdvisor: decisions:" << Path << ": " << missed << " of " << ByKey.size()
                   << " decisions for " << Module
                   << " name call sites this compile did not reach (the first: " << std::get<0>(*first) << " -> "
                   << std::get<1>(*first) << ", site " << std::get<2>(*first) << "); they have no effect\n";
  }

private:
  struct Entry {
    bool Inline, Reached;
  };
  std::string Path, Module;
  std::vector<ModuleDecisions> Modules;
  std::map<std::tuple<std::string, std::string, uint64_t>, Entry> ByKey;
  bool Reported = false;
};

InProcessPolicyRegistration
    Decisions("decisions",
              "decisions:FILE: the decisions export-decisions wrote, by call site; every other site as the default",
              [](llvm::StringRef argument) -> llvm::Expected<std::unique_ptr<InProcessPolicy>> {
                if (argument.empty())
                  return llvm::createStringError("decisions:FILE needs the file export-decisions wrote");
                auto modules = readInlineDecisions(argument);
                if (!modules)
                  return modules.takeError();
                return std::make_unique<ExportedDecisions>(argument.str(), std::move(*modules));
              });

} // namespace
} // namespace mlgo
