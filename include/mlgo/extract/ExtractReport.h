// The machine-readable account of an extraction run
// (<output_dir>/.mlgo-corpus/extract_ir.report.json) and its stderr summary.
#pragma once

#include "mlgo/extract/ModuleOutcome.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mlgo {

struct ExtractSummary {
  size_t Candidates = 0; // unique candidates: what "out of M" counts
  size_t Ok = 0, Failed = 0, Filtered = 0, Duplicate = 0, Skipped = 0, Resumed = 0;
  bool Interrupted = false;
};

ExtractSummary summarize(const std::vector<ModuleOutcome> &outcomes, bool interrupted);

/// The report document; `context` (input, input_type, output_dir, ...) is
/// copied in first. Schema: corpus_formats/extraction_report.schema.json.
nlohmann::ordered_json buildExtractReport(const std::vector<ModuleOutcome> &outcomes, const ExtractSummary &summary,
                                          const nlohmann::ordered_json &context);

/// "failed 2 (input_missing 1, bitcode_section_missing 1); skipped 1 (...)".
std::string describeProblems(const std::vector<ModuleOutcome> &outcomes);

} // namespace mlgo
