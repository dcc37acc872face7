// combine-training-corpus: merge the sub-corpora below a root into one
// corpus description. Drop-in for LLVM's mlgo-utils combine_training_corpus.
#include "mlgo/corpus/CombineCorpora.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/Log.h"

using namespace mlgo;

int main(int argc, char **argv) {
  CLI::App app{"Combine the corpora in the direct subdirectories of --root_dir into one: writes "
               "<root_dir>/corpus_description.json listing every module as <subdir>/<module>. No module file is "
               "copied. Every sub-corpus must agree on every key but \"modules\" (has_thinlto, "
               "global_command_override, ...); otherwise nothing is written. A drop-in replacement for LLVM's "
               "mlgo-utils combine_training_corpus, with a deterministic (sorted) merge order.",
               "combine-training-corpus"};
  app.get_formatter()->column_width(34);
  std::string rootDir, verbosity = "INFO";
  app.add_option("--root_dir", rootDir, "The directory whose subdirectories hold the corpora to combine.")->required();
  app.add_option("--verbosity", verbosity, "Log level: DEBUG, INFO, WARNING or ERROR.")
      ->check(CLI::IsMember({"DEBUG", "INFO", "WARNING", "ERROR"}, CLI::ignore_case))
      ->capture_default_str();
  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;
  log::setLevel(*log::parseLevel(verbosity));

  auto combined = combineCorpora(rootDir);
  if (!combined) {
    log::error(llvm::toString(combined.takeError()));
    return 1;
  }
  if (llvm::Error e = writeCorpusDescription(rootDir, combined->Description)) {
    log::error(llvm::toString(std::move(e)));
    return 1;
  }
  log::info("Combined " + std::to_string(combined->SubCorpora.size()) + " corpora with " +
            std::to_string(combined->Description.Modules.size()) + " modules into " + rootDir + "/" +
            CorpusDescriptionFile);
  return 0;
}
