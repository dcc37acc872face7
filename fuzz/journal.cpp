// The extraction journal as extract-ir --resume reads it: readJournalFile
// (the shared JSON Lines journal) and outcomesFromJournal (the record mapping).
// Contract: any bytes give records or a clear error (damage before the last
// line), never a crash; every record, written back by journalRecord, reads
// back equal.
#include "FuzzSupport.h"

#include "mlgo/extract/Journal.h"
#include "mlgo/support/JsonLinesJournal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("extract_ir.journal", data, size);
  llvm::Expected<mlgo::JournalContents> contents = mlgo::readJournalFile(path);
  if (!contents) {
    FUZZ_CHECK(!llvm::toString(contents.takeError()).empty(), "an error without a message");
    return 0;
  }
  std::vector<mlgo::ModuleOutcome> records = mlgo::outcomesFromJournal(contents->Records);
  std::string written;
  for (const mlgo::ModuleOutcome &r : records)
    written += mlgo::jsonLine(mlgo::journalRecord(r));
  std::string again =
      mlgo::fuzz::writeScratch("again.journal", reinterpret_cast<const uint8_t *>(written.data()), written.size());
  llvm::Expected<mlgo::JournalContents> reread = mlgo::readJournalFile(again);
  FUZZ_CHECK(static_cast<bool>(reread), "our own records do not read back: " + written);
  std::vector<mlgo::ModuleOutcome> back = mlgo::outcomesFromJournal(reread->Records);
  FUZZ_CHECK(back.size() == records.size(), "records lost in a round trip: " + written);
  for (size_t i = 0; i < records.size(); ++i) {
    const mlgo::ModuleOutcome &a = records[i], &b = back[i];
    FUZZ_CHECK(a.Input == b.Input && a.Member == b.Member && a.Name == b.Name && a.Status == b.Status &&
                   a.Reason == b.Reason && a.InputSize == b.InputSize && a.InputMtimeNs == b.InputMtimeNs,
               "record " + std::to_string(i) +
                   " differs after a round trip: " + mlgo::jsonLine(mlgo::journalRecord(a)));
  }
  return 0;
}
