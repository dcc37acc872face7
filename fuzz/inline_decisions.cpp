// The inline decisions file (export-decisions --output), as the inliner
// plugin's decisions:FILE policy reads it inside the user's compiler
// (parseInlineDecisions; readInlineDecisions reads the file and calls it).
// Contract: any bytes give modules or a clear error naming the file, never
// a crash or an exception; no module name, no non-empty source_filename and
// no (caller, callee, site) within a module twice; every module written back
// by inlineDecisionsLine reads back equal (and writes the same bytes again);
// each module is found by its source_filename, and something by its module
// name; a tighter line bound only ever refuses more.
#include "FuzzSupport.h"

#include "mlgo/policy/InlineDecisions.h"

#include <set>

namespace {

const std::string Path = "fuzz/inline_decisions.jsonl";

std::string linesOf(const std::vector<mlgo::ModuleDecisions> &modules) {
  std::string text;
  for (const mlgo::ModuleDecisions &m : modules)
    text += mlgo::inlineDecisionsLine(m);
  return text;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  // Small bounds: the fuzzer's inputs are small, and the bounds themselves
  // are part of what is fuzzed.
  mlgo::InlineDecisionsLimits limits;
  limits.MaxFileBytes = 1 << 20;
  limits.MaxLineBytes = 64 << 10;
  llvm::Expected<std::vector<mlgo::ModuleDecisions>> modules = mlgo::parseInlineDecisions(text, Path, limits);
  mlgo::InlineDecisionsLimits tight = limits;
  tight.MaxLineBytes = 64;
  llvm::Expected<std::vector<mlgo::ModuleDecisions>> bounded = mlgo::parseInlineDecisions(text, Path, tight);
  if (!modules) {
    FUZZ_ERROR_MESSAGE(modules.takeError(), Path);
    FUZZ_CHECK(!bounded, "a tighter bound accepts what the default refuses");
    FUZZ_ERROR_MESSAGE(bounded.takeError(), Path);
    return 0;
  }
  if (bounded)
    FUZZ_CHECK(bounded->size() == modules->size(), "a tighter bound reads other modules");
  else
    FUZZ_ERROR_MESSAGE(bounded.takeError(), Path);

  std::set<std::string> names, sources;
  for (const mlgo::ModuleDecisions &m : *modules) {
    FUZZ_CHECK(!m.Module.empty(), "a module without a name");
    FUZZ_CHECK(names.insert(m.Module).second, "a module read twice: " + m.Module);
    if (!m.SourceFileName.empty())
      FUZZ_CHECK(sources.insert(m.SourceFileName).second, "a source file read twice: " + m.SourceFileName);
    std::set<std::tuple<std::string, std::string, uint64_t>> keys;
    for (const mlgo::SiteDecision &d : m.Decisions)
      FUZZ_CHECK(keys.emplace(d.Caller, d.Callee, d.Site).second, "a site read twice in " + m.Module);
  }

  std::string written = linesOf(*modules);
  auto reread = mlgo::parseInlineDecisions(written, Path);
  if (!reread)
    FUZZ_CHECK(false, "our own lines do not read back: " + llvm::toString(reread.takeError()));
  FUZZ_CHECK(reread->size() == modules->size(), "modules lost in a round trip");
  for (size_t i = 0; i < modules->size(); ++i) {
    const mlgo::ModuleDecisions &a = (*modules)[i], &b = (*reread)[i];
    FUZZ_CHECK(a.Module == b.Module && a.SourceFileName == b.SourceFileName,
               "module " + std::to_string(i) + " differs after a round trip");
    FUZZ_CHECK(a.Decisions.size() == b.Decisions.size(),
               "module " + std::to_string(i) + "'s decisions lost in a round trip");
    for (size_t j = 0; j < a.Decisions.size(); ++j)
      FUZZ_CHECK(a.Decisions[j].key() == b.Decisions[j].key() && a.Decisions[j].Inline == b.Decisions[j].Inline,
                 "module " + std::to_string(i) + " decision " + std::to_string(j) + " differs after a round trip");
  }
  FUZZ_CHECK(linesOf(*reread) == written, "the lines written back differ from the first writing");

  for (const mlgo::ModuleDecisions &m : *modules) {
    std::string why;
    if (!m.SourceFileName.empty()) {
      const mlgo::ModuleDecisions *found = mlgo::findModuleDecisions(*modules, m.SourceFileName, why);
      FUZZ_CHECK(found == &m, "module " + m.Module + " is not found by its source file " + m.SourceFileName +
                                  (found ? "" : ": " + why));
    }
    const mlgo::ModuleDecisions *byName = mlgo::findModuleDecisions(*modules, m.Module, why);
    FUZZ_CHECK(byName != nullptr, "nothing found by the module name " + m.Module + ": " + why);
  }
  return 0;
}
