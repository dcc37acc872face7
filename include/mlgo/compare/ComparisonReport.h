// compare-harvests' reports for programs and terminals: the JSON document
// (compare_harvests.schema.json) and the human summary printed on stdout.
#pragma once

#include "mlgo/compare/HarvestComparison.h"

#include <nlohmann/json.hpp>

#include <string>

namespace mlgo {

/// The whole comparison as JSON; `top` is how many modules top_grown lists.
nlohmann::ordered_json comparisonJson(const HarvestComparison &comparison, size_t top);

/// The summary: totals, counts, the modules that failed or are in one
/// harvest only, the `top` that grew most and the first `top` flipped sites.
/// Names are data: control characters in them are shown as \xNN.
std::string comparisonText(const HarvestComparison &comparison, size_t top);

/// "+1.25%", "-3.00%", "0.00%"; "+inf%" for growth from nothing.
std::string formatChange(const std::optional<double> &change);

} // namespace mlgo
