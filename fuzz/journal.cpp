// The extraction journal through readJournal (extract-ir --resume).
// Contract: any bytes read as a list of records (bad lines are skipped, never
// fatal), and every record, written back by journalLine, reads back equal.
#include "FuzzSupport.h"

#include "mlgo/extract/Journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("extract_ir.journal", data, size);
  std::vector<mlgo::ModuleOutcome> records = mlgo::readJournal(path);
  std::string written;
  for (const mlgo::ModuleOutcome &r : records)
    written += mlgo::journalLine(r);
  std::string again =
      mlgo::fuzz::writeScratch("again.journal", reinterpret_cast<const uint8_t *>(written.data()), written.size());
  std::vector<mlgo::ModuleOutcome> reread = mlgo::readJournal(again);
  FUZZ_CHECK(reread.size() == records.size(), "records lost in a round trip: " + written);
  for (size_t i = 0; i < records.size(); ++i) {
    const mlgo::ModuleOutcome &a = records[i], &b = reread[i];
    FUZZ_CHECK(a.Input == b.Input && a.Member == b.Member && a.Name == b.Name && a.Status == b.Status &&
                   a.Reason == b.Reason && a.InputSize == b.InputSize && a.InputMtimeNs == b.InputMtimeNs,
               "record " + std::to_string(i) + " differs after a round trip: " + mlgo::journalLine(a));
  }
  return 0;
}
