// A harvest's decision sites file (OUT/logs/<module>.sites.jsonl), as
// compare-harvests reads it (readDecisionSites).
// Contract: any bytes give sites or a clear error naming the file (and, for
// a bad line, the line), never a crash or an exception; no (caller, callee,
// site) twice; every site written back by DecisionSite::toJson reads back
// equal; a tighter line bound only ever refuses more.
#include "FuzzSupport.h"

#include "mlgo/log/DecisionSites.h"
#include "mlgo/support/JsonLinesJournal.h"

#include <set>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("m.sites.jsonl", data, size);
  llvm::Expected<std::vector<mlgo::DecisionSite>> sites = mlgo::readDecisionSites(path);
  mlgo::DecisionSitesLimits tight;
  tight.MaxLineBytes = 64;
  llvm::Expected<std::vector<mlgo::DecisionSite>> bounded = mlgo::readDecisionSites(path, tight);
  if (!sites) {
    FUZZ_ERROR_MESSAGE(sites.takeError(), path);
    FUZZ_CHECK(!bounded, "a tighter bound accepts what the default refuses");
    FUZZ_ERROR_MESSAGE(bounded.takeError(), path);
    return 0;
  }
  if (bounded)
    FUZZ_CHECK(bounded->size() == sites->size(), "a tighter bound reads other sites");
  else
    FUZZ_ERROR_MESSAGE(bounded.takeError(), path);

  std::set<std::tuple<std::string, std::string, uint64_t>> keys;
  std::string written;
  for (const mlgo::DecisionSite &site : *sites) {
    FUZZ_CHECK(keys.emplace(site.Caller, site.Callee, site.Site).second, "a site read twice: " + site.Caller);
    written += mlgo::jsonLine(site.toJson());
  }
  std::string again =
      mlgo::fuzz::writeScratch("again.sites.jsonl", reinterpret_cast<const uint8_t *>(written.data()), written.size());
  auto reread = mlgo::readDecisionSites(again);
  if (!reread)
    FUZZ_CHECK(false, "our own sites do not read back: " + llvm::toString(reread.takeError()));
  FUZZ_CHECK(reread->size() == sites->size(), "sites lost in a round trip");
  for (size_t i = 0; i < sites->size(); ++i)
    FUZZ_CHECK((*reread)[i].toJson() == (*sites)[i].toJson(),
               "site " + std::to_string(i) + " differs after a round trip");
  return 0;
}
