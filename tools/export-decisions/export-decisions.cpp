// export-decisions: a harvest's inlining decisions (a search's result, or any
// policy's), as files the user's own build applies with stock clang-22.
#include "mlgo/deploy/DecisionExport.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/Log.h"

#include <cstdio>
#include <iostream>

using namespace mlgo;

int main(int argc, char **argv) {
  CLI::App app{"Export the inlining decisions of a harvest (harvest-logs --mode=plugin --decision_sites; a search's "
               "kept trajectories) that differ from the default heuristic, by call site: as the inliner plugin's "
               "decisions file, which clang-22 -fpass-plugin=libMLGOInlineAdvisor.so -mllvm "
               "-mlgo-inliner-policy=decisions:FILE applies exactly, and as LLVM's inline-replay remarks "
               "(-mllvm -cgscc-inline-replay=FILE, no plugin) for the decisions those can express. Exit 0; 3 "
               "when a module of the harvest could not be exported (listed); 1 on an error.",
               "export-decisions"};
  app.get_formatter()->column_width(36);
  std::string harvestDir, corpusDir, output, replay, report;
  bool quiet = false;
  app.add_option("--harvest_dir", harvestDir, "The harvest's --output_dir.")->required();
  app.add_option("--corpus,--data_path", corpusDir,
                 "The corpus it harvested (each module's source_filename, which the build's compile names).")
      ->required();
  app.add_option("--output", output, "The decisions file to write (JSON Lines, inline_decisions.schema.json).")
      ->required();
  app.add_option("--replay_remarks", replay,
                 "Also write LLVM's inline-replay remarks here (for -mllvm -cgscc-inline-replay=FILE): the "
                 "decisions that have a debug location and an unambiguous replay key.");
  app.add_option("--report", report, "Also write the report as JSON (export_decisions_report.schema.json).");
  app.add_flag("-q,--quiet", quiet, "Errors only.");
  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;
  log::setLevel(quiet ? log::Level::Error : log::Level::Info);

  auto exported = exportDecisions(harvestDir, corpusDir);
  if (!exported) {
    log::error(llvm::toString(exported.takeError()));
    return 1;
  }
  std::vector<std::pair<std::string, std::string>> files{{output, decisionsFileText(*exported)}};
  if (!replay.empty())
    files.emplace_back(replay, replayRemarksText(*exported));
  if (!report.empty())
    files.emplace_back(report, exportReport(*exported).dump(2) + "\n");
  for (const auto &[path, text] : files)
    if (llvm::Error e = writeFileAtomically(path, text)) {
      log::error(llvm::toString(std::move(e)));
      return 1;
    }
  log::info("exported " + std::to_string(exported->Inlined + exported->NotInlined) + " of " +
            std::to_string(exported->Decisions) + " decisions (" + std::to_string(exported->Inlined) +
            " inline where the default does not, " + std::to_string(exported->NotInlined) +
            " do not inline where it does) of " + std::to_string(exported->Modules.size()) + " modules to " + output);
  if (!replay.empty())
    log::info(std::to_string(exported->ReplayRemarks.size()) + " replay remarks to " + replay + "; " +
              std::to_string(exported->Unreplayable.size()) + " decisions they cannot express" +
              (exported->Unreplayable.empty()
                   ? ""
                   : " (the first: " + exported->Unreplayable.front().Module + " " +
                         exported->Unreplayable.front().Caller + " -> " + exported->Unreplayable.front().Callee + ": " +
                         exported->Unreplayable.front().Reason + ")"));
  if (!exported->Compiler.empty() && exported->Compiler != "clang")
    log::warning("the harvest compiled with --compiler=" + exported->Compiler +
                 ": the decisions are the same in clang, but only a --compiler=clang harvest's objects are the "
                 "ones the rebuild makes");
  for (const UnexportedModule &u : exported->Unexported)
    log::error("not exported: " + u.Module + ": " + u.Reason);
  return exported->Unexported.empty() ? 0 : 3;
}
