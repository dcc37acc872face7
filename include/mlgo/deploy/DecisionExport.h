// What a harvest's decisions become in the user's own build (export-decisions):
// from a harvest directory (a search's kept trajectories, or any policy's
// harvest with decision sites), every decision that differs from the default
// heuristic's, by call site,
//  - as the inliner plugin's decisions file (InlineDecisions.h), which
//    `clang-22 -fpass-plugin=libMLGOInlineAdvisor.so -mllvm
//    -mlgo-inliner-policy=decisions:FILE` applies exactly (the same advisor
//    that made the harvest decides, so every site is expressible), and
//  - as LLVM's own inline-replay remarks (`-mllvm -cgscc-inline-replay=FILE`,
//    no plugin), for the decisions those can express: a site with a debug
//    location whose replay key (callee and call-site location) no other
//    logged site, in any module, shares with the opposite decision.
#pragma once

#include "mlgo/policy/InlineDecisions.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mlgo {

/// A decision the replay remarks cannot carry, and why.
struct UnreplayableDecision {
  std::string Module, Caller, Callee, Reason;
  uint64_t Site = 0;
};

/// A module of the harvest that could not be exported, and why (a failed
/// module, an unreadable sites file or bitcode).
struct UnexportedModule {
  std::string Module, Reason;
};

struct DecisionExport {
  std::vector<ModuleDecisions> Modules;   // in the journal's order
  size_t Decisions = 0;                   // every logged decision of the exported modules
  size_t Inlined = 0;                     // exported: inline where the default does not
  size_t NotInlined = 0;                  // exported: do not inline where the default does
  std::vector<std::string> ReplayRemarks; // lines, without '\n', in module order, each once
  std::vector<UnreplayableDecision> Unreplayable;
  std::vector<UnexportedModule> Unexported;
  std::string Compiler; // the harvest's --compiler ("" when its header does not say)
};

/// Reads the harvest at `harvestDir` (its journal, its sites files) and the
/// corpus it harvested (each module's source_filename). Errors: not a
/// harvest, an unfinished commit, a harvest without decision sites.
llvm::Expected<DecisionExport> exportDecisions(llvm::StringRef harvestDir, llvm::StringRef corpusDir);

/// The decisions file's text (one line per module).
std::string decisionsFileText(const DecisionExport &exported);

/// The replay remarks file's text.
std::string replayRemarksText(const DecisionExport &exported);

/// export-decisions' machine-readable report
/// (corpus_formats/export_decisions_report.schema.json).
nlohmann::ordered_json exportReport(const DecisionExport &exported);

} // namespace mlgo
