// Inlining decisions that ship: the exported result of a harvest (a search's
// kept trajectories, or any policy's), by call site, as the user's own build
// applies them with stock clang-22 and the inliner plugin's
// `-mlgo-inliner-policy=decisions:FILE` (corpus_formats/inline_decisions.schema.json).
//
//   {"module": "lapi.o", "source_filename": "src/lapi.c",
//    "decisions": [{"caller": "f", "callee": "g", "site": 0, "inline": false}]}
//
// One JSON object per line, one line per module. A site is named as the
// decision sites file names it (caller, callee, and which decision about a
// call from caller to callee it is), not by step number, so that an edit
// elsewhere in the module does not move it. Only the decisions that differ
// from the default heuristic's are listed: every other site follows the
// default. The file is data from someone else and is read inside the
// user's compiler: bounded, exact keys and types, and a bad line is an
// error naming the file and the line.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace mlgo {

/// A call site and what to decide there.
struct SiteDecision {
  std::string Caller, Callee;
  uint64_t Site = 0;
  bool Inline = false;
  auto key() const { return std::tie(Caller, Callee, Site); }
};

/// One module's exported decisions.
struct ModuleDecisions {
  std::string Module;         // the corpus' module name ("lib/a.o")
  std::string SourceFileName; // the module's source_filename ("../src/a.c"); may be empty
  std::vector<SiteDecision> Decisions;
};

struct InlineDecisionsLimits {
  uint64_t MaxFileBytes = 256ull << 20;
  size_t MaxLineBytes = 64 << 20;
};

/// Reads a decisions file. A missing or non-regular file, a line that is not
/// exactly a module's object, a module or source file listed twice, or a
/// site listed twice in a module is an error naming the file and the line.
llvm::Expected<std::vector<ModuleDecisions>> readInlineDecisions(llvm::StringRef path,
                                                                 const InlineDecisionsLimits &limits = {});

/// Parses the file's text (`path` names it in errors).
llvm::Expected<std::vector<ModuleDecisions>> parseInlineDecisions(llvm::StringRef text, llvm::StringRef path,
                                                                  const InlineDecisionsLimits &limits = {});

/// One line of a decisions file, '\n' included.
std::string inlineDecisionsLine(const ModuleDecisions &module);

/// Which module a compile named `name` (clang: the main file as the build
/// names it; harvest-logs: the corpus module) follows: the one whose
/// source_filename, else whose module name, is `name`; else the one whose
/// source_filename ends in `name`'s last components or the reverse, when
/// exactly one does (a build run from another directory). nullptr when
/// none; `why` then says whether none matched or several did.
const ModuleDecisions *findModuleDecisions(const std::vector<ModuleDecisions> &modules, llvm::StringRef name,
                                           std::string &why);

} // namespace mlgo
