// <corpus>/link_order.json: the order in which the build linked the corpus'
// modules, recorded by extract-ir when its input is a link (a linker params
// file, bazel's CppLink action, a linked binary) and read by
// harvest-logs --link. Ours, beside corpus_description.json, which stays
// exactly the reference's format (corpus_formats/link_order.schema.json).
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlgo {

inline constexpr const char *LinkOrderFile = "link_order.json";

struct RecordedLinkOrder {
  std::string InputType;            // extract-ir's --input_type: params, bazel_aquery, binary
  std::string Input;                // its --input
  std::vector<std::string> Modules; // module names, in link order
};

/// Writes <corpusDir>/link_order.json (atomically).
llvm::Error writeLinkOrder(llvm::StringRef corpusDir, const RecordedLinkOrder &order);

/// <corpusDir>/link_order.json, or nullopt when the corpus has none. A file
/// that is not of this format is an Error naming it.
llvm::Expected<std::optional<RecordedLinkOrder>> readLinkOrder(llvm::StringRef corpusDir);

} // namespace mlgo
