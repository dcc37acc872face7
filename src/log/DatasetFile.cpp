#include "mlgo/log/DatasetFile.h"

#include "mlgo/log/TFRecord.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/BeneathPath.h"
#include "mlgo/support/PathUtil.h"

namespace mlgo {

namespace {

// A harvest's log, reached without following a link below the harvest.
llvm::Expected<std::unique_ptr<TrainingLogReader>> openBelow(const DatasetInput &input) {
  std::string path = joinPath(input.Below, input.LogPath);
  auto fd = openRegularFileBeneath(input.Below, input.LogPath);
  if (!fd)
    return fd.takeError(); // it names the path
  return std::make_unique<TrainingLogReader>(fd->release(), path, /*owned=*/true);
}

} // namespace

llvm::Expected<DatasetTotals> writeTFRecordDataset(const std::vector<DatasetInput> &inputs, llvm::StringRef path,
                                                   llvm::StringRef keysPath) {
  AtomicFileWriter dataset, keys;
  if (llvm::Error e = dataset.open(path))
    return e;
  if (!keysPath.empty())
    if (llvm::Error e = keys.open(keysPath))
      return e;
  DatasetTotals totals;
  std::string framed, keyText;
  for (const DatasetInput &input : inputs) {
    auto reader = input.Below.empty() ? TrainingLogReader::open(input.LogPath) : openBelow(input);
    if (!reader)
      return reader.takeError();
    auto records = logToSequenceExamples(**reader, input.Reward);
    if (!records)
      return records.takeError();
    framed.clear();
    keyText.clear();
    for (const DatasetRecord &record : *records) {
      appendTFRecord(framed, record.Payload);
      keyText += record.Key + "\n";
      ++totals.Records;
      totals.Steps += record.Steps;
    }
    if (llvm::Error e = dataset.write(framed))
      return e;
    if (!keysPath.empty())
      if (llvm::Error e = keys.write(keyText))
        return e;
  }
  if (!keysPath.empty() && totals.Records == 0)
    if (llvm::Error e = keys.write("\n"))
      return e;
  if (llvm::Error e = dataset.commit())
    return e;
  if (!keysPath.empty())
    if (llvm::Error e = keys.commit())
      return e;
  return totals;
}

} // namespace mlgo
