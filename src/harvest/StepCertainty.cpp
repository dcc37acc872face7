#include "mlgo/harvest/StepCertainty.h"

#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/log/DecisionSites.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/support/BeneathPath.h"

#include <cmath>
#include <limits>
#include <optional>

namespace mlgo {

llvm::Expected<std::vector<double>> stepCertainty(CertaintySource source, const std::string &dir,
                                                  const std::string &module, size_t decisions) {
  std::vector<double> certainty;
  if (decisions == 0)
    return certainty; // a module without decisions has no log and no sites
  std::string file;
  if (source == CertaintySource::CostMargin) {
    // Below a harvest we were given: no symbolic link is followed.
    file = harvestSitesPath(dir, module);
    auto fd = openRegularFileBeneath(dir, harvestSitesName(module));
    if (!fd)
      return fd.takeError();
    auto sites = readDecisionSites(fd->get(), file);
    if (!sites)
      return sites.takeError();
    for (const DecisionSite &site : *sites) {
      if (!site.HasCostMargin)
        return llvm::createStringError("%s has no cost_margin (written by an older plugin?)", file.c_str());
      certainty.push_back(site.CostMargin ? std::fabs(static_cast<double>(*site.CostMargin))
                                          : std::numeric_limits<double>::infinity());
    }
  } else {
    file = harvestLogPath(dir, module);
    // Logits: |yes - no| of inlining_logits; a policy's own certainty: |c|.
    bool logits = source == CertaintySource::Logits;
    const char *name = logits ? "inlining_logits" : "policy_certainty";
    size_t elements = logits ? 2 : 1;
    std::optional<size_t> column;
    llvm::Error error = visitLogBeneath(
        dir, harvestLogName(module), [&](TrainingLogReader &reader, TrainingLogReader::Event event) -> llvm::Error {
          if (event == TrainingLogReader::Event::Header) {
            column = reader.header().find(name);
            if (!column || reader.header().Features[*column].elementCount() != elements)
              return llvm::createStringError("%s logs no %s of %zu element(s): the policy gives no certainty",
                                             file.c_str(), name, elements);
          }
          if (event == TrainingLogReader::Event::Observation) {
            const TensorSpec &spec = reader.header().Features[*column];
            llvm::StringRef bytes = reader.feature(*column);
            certainty.push_back(logits ? std::fabs(spec.elementAsDouble(bytes, 1) - spec.elementAsDouble(bytes, 0))
                                       : std::fabs(spec.elementAsDouble(bytes, 0)));
          }
          return llvm::Error::success();
        });
    if (error)
      return std::move(error);
  }
  if (certainty.size() != decisions)
    return llvm::createStringError("%s describes %zu decisions, the log %zu", file.c_str(), certainty.size(),
                                   decisions);
  // NaN logits would order nothing: least sure of all, so they are tried.
  for (double &c : certainty)
    if (std::isnan(c))
      c = 0;
  return certainty;
}

} // namespace mlgo
