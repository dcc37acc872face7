#include "mlgo/explore/RolloutLogs.h"

#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/PathUtil.h"
#include "mlgo/support/PlaceBeneath.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace mlgo {

std::string rolloutLogName(const std::string &module) { return "rollouts/" + module + ".log"; }

std::string rolloutSitesName(const std::string &module) { return "rollouts/" + module + ".sites.jsonl"; }

namespace {

// Written below explore/ (ours), then put in place following no link.
llvm::Error placeRolloutFile(llvm::StringRef outputDir, llvm::StringRef text, const std::string &name) {
  std::string staged = "explore/rollout-file.tmp";
  if (llvm::Error e = writeFileAtomically(joinPath(outputDir, staged), text))
    return e;
  if (llvm::Error e = placeBeneath(outputDir, staged, outputDir, name))
    return e;
  return removeBeneath(outputDir, staged);
}

} // namespace

llvm::Error writeRolloutLog(llvm::StringRef outputDir, const ModuleRollouts &rollouts) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::unique_ptr<TrainingLogWriter> writer;
  size_t step = 0, applied = 0;
  std::string base = harvestLogName(rollouts.Module);
  llvm::Error e =
      visitLogBeneath(outputDir, base, [&](TrainingLogReader &reader, TrainingLogReader::Event event) -> llvm::Error {
        switch (event) {
        case TrainingLogReader::Event::Header: {
          if (writer)
            return llvm::createStringError("%s: more than one header", base.c_str());
          LogHeader header = reader.header();
          for (const char *name : {"base_native_size", "rollout_native_size"}) {
            if (header.find(name))
              return llvm::createStringError("%s: already has a %s column", base.c_str(), name);
            TensorSpec spec;
            spec.Name = name; // int64_t [1]
            header.Features.push_back(spec);
          }
          writer = std::make_unique<TrainingLogWriter>(os, std::move(header));
          return llvm::Error::success();
        }
        case TrainingLogReader::Event::Context:
          writer->switchContext(reader.context());
          return llvm::Error::success();
        case TrainingLogReader::Event::Observation: {
          auto it = rollouts.FlippedSize.find(step++);
          int64_t values[2] = {static_cast<int64_t>(rollouts.BaseSize),
                               it == rollouts.FlippedSize.end() ? -1 : static_cast<int64_t>(it->second)};
          applied += it != rollouts.FlippedSize.end();
          llvm::StringRef pieces[] = {reader.observation(),
                                      llvm::StringRef(reinterpret_cast<const char *>(values), sizeof values)};
          return writer->observationRaw(pieces);
        }
        case TrainingLogReader::Event::Outcome:
          return writer->outcome(reader.outcome());
        case TrainingLogReader::Event::End:
          return llvm::Error::success();
        }
        return llvm::Error::success();
      });
  if (e)
    return e;
  if (applied != rollouts.FlippedSize.size())
    return llvm::createStringError("%s: %zu steps, and rollouts of steps past them", base.c_str(), step);
  os.flush();
  // The sites first: a rollout log is only ever beside its own sites.
  std::string sites = harvestSitesName(rollouts.Module);
  auto hasSites = existsBeneath(outputDir, sites);
  if (!hasSites)
    return hasSites.takeError();
  if (*hasSites) {
    auto buffer = readFileBeneath(outputDir, sites);
    if (!buffer)
      return buffer.takeError();
    if (llvm::Error e = placeRolloutFile(outputDir, (*buffer)->getBuffer(), rolloutSitesName(rollouts.Module)))
      return e;
  }
  return placeRolloutFile(outputDir, text, rolloutLogName(rollouts.Module));
}

} // namespace mlgo
