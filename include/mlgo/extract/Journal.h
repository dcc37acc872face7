// The extraction journal's records: one per finished candidate (or archive
// member), kept in the shared JSON Lines journal (support/JsonLinesJournal).
#pragma once

#include "mlgo/extract/ModuleOutcome.h"

#include <nlohmann/json.hpp>
#include <vector>

namespace mlgo {

nlohmann::ordered_json journalRecord(const ModuleOutcome &outcome);

/// The records that describe a candidate; others (unknown status, missing
/// fields) are not reusable and are left out.
std::vector<ModuleOutcome> outcomesFromJournal(const std::vector<nlohmann::ordered_json> &records);

} // namespace mlgo
