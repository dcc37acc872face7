#include "mlgo/harvest/HarvestLink.h"

#include "mlgo/corpus/LinkOrder.h"
#include "mlgo/evaluate/BaselineCache.h"
#include "mlgo/evaluate/DefaultSizes.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/harvest/ModuleInputs.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

namespace mlgo {
namespace {

// The link order: --link_order, else the one extract-ir recorded, else the corpus'.
llvm::Expected<std::vector<std::string>> linkOrderOf(const HarvestOptions &options, const CorpusDescription &corpus,
                                                     const std::vector<PlannedModule> &plan, std::string &source) {
  std::vector<std::string> planned;
  for (const PlannedModule &module : plan)
    planned.push_back(module.Name);
  if (!options.Link.OrderFile.empty()) {
    auto listed = readLinkOrderFile(options.Link.OrderFile);
    if (!listed)
      return listed.takeError();
    source = options.Link.OrderFile;
    return linkOrder(corpus.Modules, planned, &*listed, "--link_order: " + options.Link.OrderFile);
  }
  auto recorded = readLinkOrder(options.CorpusDir);
  if (!recorded)
    return recorded.takeError();
  if (*recorded) {
    source = joinPath(options.CorpusDir, LinkOrderFile);
    return linkOrder(corpus.Modules, planned, &(*recorded)->Modules, source);
  }
  source = "corpus";
  return linkOrder(corpus.Modules, planned, nullptr, "");
}

// --baseline_cache with --link: the default policy's link stores its sizes,
// keyed by its modules' baseline keys and the template; another policy's
// link finds them there, so it is compared with the default without
// relinking (docs/harvest-linking.md#the-default-policys-link-as-a-baseline).
void keepOrFindDefaultLink(const HarvestOptions &options, const PassOutcome &pass,
                           const std::vector<std::string> &order, LinkResult &result) {
  std::vector<std::string> keys;
  for (const std::string &module : order) {
    auto in = harvestModuleInputs(options, pass.Corpus, module);
    std::optional<std::string> key;
    if (in)
      key = pass.Baselines.keyOf(*in);
    else
      llvm::consumeError(in.takeError());
    if (!key) {
      result.BaselineStatus = "absent";
      result.BaselineReason = "cannot compute the baseline key of " + module;
      return;
    }
    keys.push_back(std::move(*key));
  }
  const BaselineCache &cache = *pass.Baselines.cache();
  auto key = [&](const char *what) {
    return linkedBaselineKey(keys, options.Link.Words, options.Link.ExtraObjects, what);
  };
  if (options.Policy.How == PolicySpec::Kind::Default) {
    if (!result.ok())
      return;
    llvm::Error stored = cache.store(key("text"), result.Sizes->Text, "(linked text)");
    if (!stored)
      stored = cache.store(key("allocated"), result.Sizes->allocated(), "(linked allocated)");
    result.BaselineStatus = stored ? "absent" : "stored";
    result.BaselineReason = stored ? "cannot store it: " + llvm::toString(std::move(stored)) : "";
    if (!stored)
      result.DefaultText = result.Sizes->Text, result.DefaultAllocated = result.Sizes->allocated();
    return;
  }
  std::string why;
  result.DefaultText = cache.lookup(key("text"), &why);
  if (result.DefaultText)
    result.DefaultAllocated = cache.lookup(key("allocated"), &why);
  if (result.DefaultText && result.DefaultAllocated) {
    result.BaselineStatus = "cached";
    return;
  }
  result.DefaultText.reset();
  result.BaselineStatus = "absent";
  result.BaselineReason = why == "absent" ? "the cache has no default-policy link of these modules with this template "
                                            "(harvest them with --policy=default and the same --link and cache)"
                                          : why;
}

void logLinkResult(const LinkResult &result) {
  if (result.ok())
    log::info("linked " + std::to_string(result.Objects) + " objects: " + result.Output + ", text " +
              std::to_string(result.Sizes->Text) + " bytes, allocated " + std::to_string(result.Sizes->allocated()));
  else
    log::error("link " + result.Status + ": " + result.Reason);
}

LinkResult linkProgram(const HarvestOptions &options, const PassOutcome &pass, const std::vector<std::string> &order,
                       const std::string &orderSource, const HarvestSummary &summary) {
  const std::map<std::string, HarvestRecord> &done = pass.Done;
  if (summary.Interrupted || summary.Stopped) {
    LinkResult result;
    result.OrderSource = orderSource;
    result.Reason = summary.Interrupted ? "the harvest was interrupted" : "the harvest stopped: " + *summary.Stopped;
    return result;
  }
  LinkRequest request{options.Link,
                      options.OutputDir,
                      order,
                      orderSource,
                      {},
                      options.CompilerWritableDirs,
                      options.CompilerReadableDirs};
  for (const std::string &module : order)
    if (auto it = done.find(module); it == done.end() || !it->second.ok())
      request.NotOk.push_back(module + " (" + (it == done.end() ? "not compiled" : it->second.Status) + ")");
  LinkResult result = linkHarvest(request);
  if (pass.Baselines.cache())
    keepOrFindDefaultLink(options, pass, order, result);
  logLinkResult(result);
  return result;
}

} // namespace

llvm::Expected<LinkResult> relinkHarvest(const HarvestOptions &options) {
  auto planned = planCorpus(options.CorpusDir, options.Selection);
  if (!planned)
    return planned.takeError();
  std::string orderSource;
  auto order = linkOrderOf(options, planned->Corpus, planned->Plan, orderSource);
  if (!order)
    return order.takeError();
  auto journal = readHarvestJournal(harvestJournalPath(options.OutputDir));
  if (!journal)
    return journal.takeError();
  std::map<std::string, const HarvestRecord *> latest;
  for (const HarvestJournalLine &line : journal->Latest)
    latest[line.Record.Module] = &line.Record;
  LinkRequest request{options.Link,
                      options.OutputDir,
                      *order,
                      orderSource,
                      {},
                      options.CompilerWritableDirs,
                      options.CompilerReadableDirs};
  for (const std::string &module : *order)
    if (auto it = latest.find(module); it == latest.end() || !it->second->ok())
      request.NotOk.push_back(module + " (" + (it == latest.end() ? "not compiled" : it->second->Status) + ")");
  LinkResult result = linkHarvest(request);
  logLinkResult(result);
  return result;
}

llvm::Expected<HarvestSummary> runHarvest(const HarvestOptions &options) {
  if (!options.Link.requested())
    return runHarvestPass(options);
  // The order is checked before anything is compiled; the link runs once
  // every module is (LinkStep.h).
  std::vector<std::string> order;
  std::string orderSource;
  PassSteps steps;
  steps.BeforeCompiles = [&](const CorpusDescription &corpus, const std::vector<PlannedModule> &plan) -> llvm::Error {
    auto ordered = linkOrderOf(options, corpus, plan, orderSource);
    if (!ordered)
      return ordered.takeError();
    order = std::move(*ordered);
    return llvm::Error::success();
  };
  steps.AfterCompiles = [&](const PassOutcome &pass, HarvestSummary &summary) {
    summary.Linked = linkProgram(options, pass, order, orderSource, summary);
  };
  return runHarvestPass(options, steps);
}

} // namespace mlgo
