// compare-harvests: how much smaller or bigger harvest B makes the code than
// harvest A, module by module, and which inlining decisions flipped.
#include "mlgo/compare/ComparisonReport.h"
#include "mlgo/compare/HarvestComparison.h"
#include "mlgo/compare/HtmlReport.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/Log.h"

#include <cstdio>

using namespace mlgo;

int main(int argc, char **argv) {
  CLI::App app{"Compare two harvest directories of the same corpus (harvest-logs or merge-harvest output), "
               "typically the default policy (A) against a trained one (B): the total native size of the modules "
               "ok in both, its change B/A - 1, the geometric mean of the per-module ratios, the modules that grew "
               "most, the modules in one harvest only or failed in either, and, when both harvests have decision "
               "sites (harvest-logs --decision_sites), the call sites whose inlining decision flipped. Prints a "
               "summary; --json and --html write reports. Exit 1 when the comparison cannot be made (a missing "
               "directory, an invalid or torn journal), 2 on a usage error.",
               "compare-harvests"};
  app.get_formatter()->column_width(30);
  std::string dirA, dirB, jsonPath, htmlPath;
  size_t top = 20;
  bool quiet = false;
  app.add_option("A", dirA, "The baseline harvest directory (e.g. --policy=default).")->required();
  app.add_option("B", dirB, "The harvest compared with it (e.g. a trained policy).")->required();
  app.add_option("--json", jsonPath,
                 "Also write the comparison as JSON to this file (compare_harvests.schema.json), atomically.");
  app.add_option("--html", htmlPath,
                 "Also write a self-contained HTML page (histogram, top regressions, flipped sites) to this file, "
                 "atomically.");
  app.add_option("--top", top, "How many of the modules that grew most (and of the flipped sites on stdout) to list.")
      ->check(CLI::Range(size_t(1), size_t(1000000)))
      ->capture_default_str();
  app.add_flag("-q,--quiet", quiet, "Print no summary on stdout (errors still go to stderr).");
  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;

  auto comparison = compareHarvestDirectories(dirA, dirB);
  if (!comparison) {
    log::error(llvm::toString(comparison.takeError()));
    return 1;
  }
  if (!jsonPath.empty())
    if (llvm::Error e = writeFileAtomically(
            jsonPath,
            comparisonJson(*comparison, top).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")) {
      log::error("cannot write " + jsonPath + ": " + llvm::toString(std::move(e)));
      return 1;
    }
  if (!htmlPath.empty())
    if (llvm::Error e = writeFileAtomically(htmlPath, htmlReport(*comparison, top))) {
      log::error("cannot write " + htmlPath + ": " + llvm::toString(std::move(e)));
      return 1;
    }
  if (!quiet)
    std::fputs(comparisonText(*comparison, top).c_str(), stdout);
  return 0;
}
