// validate-corpus: check an MLGO corpus before training on it.
#include "mlgo/corpus/CorpusValidator.h"
#include "mlgo/support/CommandLine.h"

#include <cstdio>

using namespace mlgo;

int main(int argc, char **argv) {
  CLI::App app{"Check an MLGO corpus: the description parses and has what ml-compiler-opt needs; every listed "
               "module has its .bc (and .cmd without a global_command_override, and .thinlto.bc when "
               "has_thinlto); every .bc parses with BitReader; every .cmd is a NUL-separated cc1 command line; no "
               ".cmd or global_command_override (a driver line as the cc1 job it makes) loads code, writes or copies "
               "files, reads a response file or sets an -mllvm option off the reviewed list (unsafe_command_line, "
               "docs/security.md); "
               "no module file is left unlisted. Reports each module's size, producer and target triple, the totals, "
               "and modules with identical bitcode. Exit 0 when the corpus is sound, 1 when it is not.",
               "validate-corpus"};
  app.get_formatter()->column_width(34);
  std::string corpus;
  bool json = false, summaryOnly = false;
  int numWorkers = 0;
  std::string clangPath = "clang-22";
  app.add_option("CORPUS_DIR", corpus, "The corpus root (the directory holding corpus_description.json).")->required();
  app.add_flag("--json", json, "Print the result as JSON (corpus_formats/validate_corpus.schema.json).");
  app.add_flag("--summary_only", summaryOnly, "Text output: leave out the per-module lines.");
  app.add_option("--num_workers", numWorkers, "Parallel checks (default: one per hardware thread).")
      ->check(CLI::PositiveNumber);
  app.add_option("--clang_path", clangPath,
                 "The clang harvest-logs will run: a driver-form command line is screened as the cc1 job this "
                 "clang's driver makes of it, as harvest-logs does.")
      ->capture_default_str();
  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;

  CorpusValidation result = validateCorpus(corpus, static_cast<unsigned>(numWorkers), clangPath);
  std::string text = json ? result.toJson().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                          : result.toText(!summaryOnly);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return result.sound() ? 0 : 1;
}
