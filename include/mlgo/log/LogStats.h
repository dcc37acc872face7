// `training-log stats`: counts, per-feature min/max/mean and the decision
// histogram over many logs (corpus_formats/training_log_stats.schema.json).
#pragma once

#include "mlgo/log/TrainingLog.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace mlgo {

class LogStats {
public:
  /// Reads one log to its end; a read error is kept (see errors()) and the
  /// log's records read before it still count.
  void add(TrainingLogReader &reader);
  /// A log that could not even be opened.
  void addError(std::string message) { Errors.push_back(std::move(message)); }

  const std::vector<std::string> &errors() const { return Errors; }
  nlohmann::ordered_json toJson() const;
  std::string toText() const;

private:
  struct Feature {
    double Min = std::numeric_limits<double>::infinity(), Max = -std::numeric_limits<double>::infinity(), Sum = 0;
    uint64_t Count = 0;
  };
  size_t Files = 0, Streams = 0, ContextRecords = 0, EmptyContexts = 0, Observations = 0, Outcomes = 0;
  size_t LogsWithoutObservations = 0;
  std::set<std::string> Contexts; // "<file>\n<context>"
  std::vector<std::string> Order;
  std::map<std::string, Feature> Features;
  std::string DecisionName;
  std::map<int64_t, uint64_t> Decisions;
  std::vector<std::string> Errors;
};

} // namespace mlgo
