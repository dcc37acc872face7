// What an input loader produces: the objects to extract, and the entries it
// could not turn into one.
#pragma once

#include <string>
#include <vector>

namespace mlgo {

/// One object proposed for extraction. The object file is
/// joinPath(Base, Rel); the module name is derived from Rel and Base unless
/// the loader chose it (make-corpus strips `.bc`).
struct ObjectCandidate {
  std::string Rel;
  std::string Base;
  /// Where the candidate came from, for messages ("cc.json entry 3").
  std::string Origin;
  std::string Name = {};
};

/// An input entry that names no object (no command, no output option, ...).
struct SkippedEntry {
  std::string Origin;
  std::string Reason; // a stable code, see corpus_formats/extraction_report.schema.json
  std::string Detail;
};

struct LoadedInput {
  std::vector<ObjectCandidate> Candidates;
  std::vector<SkippedEntry> Skipped;
};

} // namespace mlgo
