// `training-log validate`: a log parses completely, and (strict, the
// default) every context line is followed by an observation, as LLVM's
// log_reader.py and readers built like it require.
#pragma once

#include "mlgo/log/TrainingLog.h"

#include "llvm/Support/Error.h"

#include <string>

namespace mlgo {

struct LogCheck {
  size_t Streams = 0, ContextRecords = 0, Observations = 0;
  uint64_t Bytes = 0;
  std::string describe() const; // "1 stream(s), 2 context record(s), ..."
};

/// Reads the whole log. With `strict`, a context line followed by another
/// context line, a header or the end of input is an error naming its byte
/// offset and the context.
llvm::Expected<LogCheck> checkLog(TrainingLogReader &reader, bool strict);

} // namespace mlgo
