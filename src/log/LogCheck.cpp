#include "mlgo/log/LogCheck.h"

namespace mlgo {

std::string LogCheck::describe() const {
  return std::to_string(Streams) + " stream(s), " + std::to_string(ContextRecords) + " context record(s), " +
         std::to_string(Observations) + " observation(s), " + std::to_string(Bytes) + " bytes";
}

llvm::Expected<LogCheck> checkLog(TrainingLogReader &reader, bool strict) {
  LogCheck check;
  // The context line still waiting for its first observation, and where it was.
  std::optional<std::pair<std::string, uint64_t>> open;
  auto emptyContext = [&] {
    return llvm::createStringError(
        "%s: at byte %llu: context '%s' has no observation after it (LLVM's log_reader.py fails on this; "
        "--lenient accepts it)",
        reader.name().c_str(), static_cast<unsigned long long>(open->second), open->first.c_str());
  };
  while (true) {
    uint64_t at = reader.offset();
    auto event = reader.next();
    if (!event)
      return event.takeError();
    if (*event == TrainingLogReader::Event::Observation) {
      ++check.Observations;
      open.reset();
      continue;
    }
    if (strict && open && *event != TrainingLogReader::Event::Outcome)
      return emptyContext();
    if (*event == TrainingLogReader::Event::End)
      break;
    if (*event == TrainingLogReader::Event::Context) {
      ++check.ContextRecords;
      open.emplace(reader.context(), at);
    }
  }
  check.Streams = reader.streams();
  check.Bytes = reader.offset();
  return check;
}

} // namespace mlgo
