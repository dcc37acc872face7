// Finding the output file in a compiler or linker argument list.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlgo {

struct OutputOption {
  std::string Path;
  /// Indices of the arguments that make up the option (one or two).
  size_t First = 0, Count = 0;
};

/// Scans left to right; the first of `-o X`, `-oX` (not `-obj...`),
/// `--output=X` and `--output X` wins. nullopt when there is none; an error
/// when the option is the last argument and has no value.
llvm::Expected<std::optional<OutputOption>> findOutputOption(llvm::ArrayRef<std::string> args);

} // namespace mlgo
