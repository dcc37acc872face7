// `training-log dump`: every observation of a log with named features and
// its outcome, as JSON Lines or CSV.
#pragma once

#include "mlgo/log/TrainingLog.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace mlgo {

enum class DumpFormat { JsonLines, Csv };

/// Writes the rows read so far, then the first read error (if any).
llvm::Error dumpLog(TrainingLogReader &reader, DumpFormat format, llvm::raw_ostream &out);

} // namespace mlgo
