// A harvest directory as its consumers read it: harvest-logs' resume
// (readHarvestJournal), merge-harvest's shard (readHarvestDirectory: the
// journal, summary.json and default_sizes.jsonl) and the --tfrecord dataset's
// choice of logs (harvestDatasetInputs). The input is split at "\n--\n" into
// the journal, the summary and the cache.
// Contract: any bytes give records or a clear error naming the file, never a
// crash or an exception; resume and the merge accept and refuse alike; every
// record written back by HarvestRecord::toJson reads back equal; the dataset
// takes exactly the ok records with log_written, inside OUT/logs.
#include "FuzzSupport.h"

#include "mlgo/harvest/HarvestDataset.h"
#include "mlgo/harvest/HarvestJournal.h"
#include "mlgo/support/JsonLinesJournal.h"
#include "mlgo/support/PathUtil.h"

#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  std::string_view parts[3];
  for (size_t i = 0; i < 3; ++i) {
    size_t cut = i < 2 ? input.find("\n--\n") : std::string_view::npos;
    parts[i] = input.substr(0, cut);
    input = cut == std::string_view::npos ? std::string_view() : input.substr(cut + 4);
  }
  auto scratch = [](const std::string &name, std::string_view bytes) {
    return mlgo::fuzz::writeScratch("shard/" + name, reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  };
  std::string journalPath = scratch("harvest.jsonl", parts[0]);
  std::string summaryPath = scratch("summary.json", parts[1]);
  std::string cachePath = scratch("default_sizes.jsonl", parts[2]);
  std::string dir = mlgo::fuzz::scratchDir() + "/shard";

  llvm::Expected<mlgo::HarvestJournal> resumed = mlgo::readHarvestJournal(journalPath);
  llvm::Expected<mlgo::HarvestDirectory> shard = mlgo::readHarvestDirectory(dir);
  // The merge reads the same journal with the same reader.
  if (!resumed) {
    std::string message = FUZZ_ERROR_MESSAGE(resumed.takeError(), journalPath);
    FUZZ_CHECK(!shard, "the merge accepts a journal resume refuses: " + message);
    FUZZ_ERROR_MESSAGE(shard.takeError(), journalPath);
    return 0;
  }
  if (!shard) {
    // Only the summary may be what the merge refuses beyond the journal.
    FUZZ_ERROR_MESSAGE(shard.takeError(), summaryPath);
  } else {
    FUZZ_CHECK(shard->Journal.Latest.size() == resumed->Latest.size(), "resume and the merge read other records");
    if (shard->DefaultSizesIgnored)
      FUZZ_CHECK(shard->DefaultSizesIgnored->find(cachePath) != std::string::npos,
                 "a cache error without its file: " + *shard->DefaultSizesIgnored);
  }

  // Round trip: what we write reads back equal, and under a header.
  std::string written = mlgo::jsonLine({{"options", resumed->Options.value_or(nlohmann::ordered_json::object())}});
  for (const mlgo::HarvestJournalLine &line : resumed->Latest)
    written += mlgo::jsonLine(line.Record.toJson());
  std::string again =
      mlgo::fuzz::writeScratch("again.jsonl", reinterpret_cast<const uint8_t *>(written.data()), written.size());
  llvm::Expected<mlgo::HarvestJournal> reread = mlgo::readHarvestJournal(again);
  if (!reread)
    FUZZ_CHECK(false, "our own records do not read back: " + llvm::toString(reread.takeError()) + "\n" + written);
  FUZZ_CHECK(reread->Latest.size() == resumed->Latest.size(), "records lost in a round trip: " + written);
  for (size_t i = 0; i < resumed->Latest.size(); ++i)
    FUZZ_CHECK(reread->Latest[i].Record.toJson() == resumed->Latest[i].Record.toJson(),
               "record " + std::to_string(i) + " differs after a round trip: " + written);

  // The dataset: exactly the ok records with log_written (and, for the
  // inliner, a non-zero native size), each under OUT/logs.
  std::vector<mlgo::PlannedModule> plan;
  std::map<std::string, const mlgo::HarvestRecord *> records;
  size_t withLog = 0, inlinerLogs = 0;
  for (const mlgo::HarvestJournalLine &line : resumed->Latest) {
    plan.push_back({line.Record.Module, 0});
    records[line.Record.Module] = &line.Record;
    withLog += line.Record.hasLog();
    inlinerLogs += line.Record.hasLog() && line.Record.NativeSize && *line.Record.NativeSize > 0;
  }
  auto regalloc = mlgo::harvestDatasetInputs(mlgo::Problem::RegallocEvict, "/out", plan, records);
  auto inliner = mlgo::harvestDatasetInputs(mlgo::Problem::Inliner, "/out", plan, records);
  FUZZ_CHECK(regalloc.size() == withLog, "the dataset takes logs its records do not promise");
  FUZZ_CHECK(inliner.size() == inlinerLogs, "the inliner dataset takes the wrong logs");
  for (const mlgo::DatasetInput &input : regalloc) {
    // Opened below OUT (input.Below) without following a link; the name must stay in OUT/logs too.
    std::string path = mlgo::joinPath(input.Below, input.LogPath);
    FUZZ_CHECK(input.Below == "/out" && mlgo::isWithin(path, "/out/logs") && mlgo::normalizePath(path) != "/out/logs",
               "a log outside OUT/logs: " + path);
  }
  return 0;
}
