// Reading a whole training log in tests, feature by name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::test {

struct LoggedObservation {
  std::string Context;
  int64_t Index = 0;
  std::map<std::string, std::vector<double>> Features; // every element, by feature name
  std::optional<double> Outcome;
  double operator[](const std::string &feature) const { return Features.at(feature).at(0); }
};

/// Every observation of the log at `path`; a log that does not parse fails
/// the current test.
std::vector<LoggedObservation> readObservations(const std::string &path);

/// The log at `path` record by record (its header line, every context, every
/// observation's raw bytes, where each outcome is) without the outcomes'
/// values: what two regalloc logs whose rewards are computed differently (the
/// interactive host's remarks proxy, the plugin's RegAllocScore) must share
/// byte for byte when they took the same decisions.
std::string logWithoutRewards(const std::string &path);

} // namespace mlgo::test
