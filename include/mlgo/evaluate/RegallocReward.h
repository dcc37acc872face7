// Per-function rewards for register-allocation logs where the compiler
// offers none: a proxy of LLVM's RegAllocScore from the greedy allocator's
// optimization remarks.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace mlgo {

/// From `-pass-remarks-output` YAML filtered to regalloc: for each function's
/// SpillReloadCopies remark (frequency-weighted totals),
///   score = 1.0 * TotalSpillsCost + 4.0 * TotalReloadsCost
///         + 1.0 * TotalFoldedSpillsCost + 4.0 * TotalFoldedReloadsCost
///         + 0.2 * TotalCopiesCost
/// with RegAllocScore's weights for stores, loads and copies. Functions
/// without a remark allocated without spills or copies: score 0. Parsed
/// with LLVM's remarks parser; a missing or malformed file is an error that
/// names the file.
llvm::Expected<std::map<std::string, double>> regallocScores(llvm::StringRef remarksPath);

/// Rewrites `rawLog` (observations without outcomes) as `finalLog` with a
/// `reward` float score: every observation gets an outcome, 0.0 except the
/// last one of each function, which carries the function's score, as
/// development mode logs RegAllocScore. Returns the sum of the scores.
llvm::Expected<double> addRegallocRewards(llvm::StringRef rawLog, llvm::StringRef finalLog,
                                          const std::map<std::string, double> &scores);

} // namespace mlgo
