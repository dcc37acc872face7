// mlgo-ir2vec: IR2Vec program embeddings over a whole corpus, in-process
// (libLLVM's IR2Vec classes) and in parallel.
#include "mlgo/embed/EmbeddingTable.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/Log.h"

#include <nlohmann/json.hpp>

#include <cstdio>

using namespace mlgo;

int main(int argc, char **argv) {
  CLI::App app{"IR2Vec program embeddings for MLGO corpora, computed in-process with LLVM 22's IR2Vec (no tool is "
               "spawned per module).",
               "mlgo-ir2vec"};
  app.get_formatter()->column_width(30);
  app.require_subcommand(1);

  EmbedCorpusOptions o;
  std::string kind = "symbolic", report;
  CLI::App *embed = app.add_subcommand(
      "embed", "Embed every function (and module) of a corpus: one JSON Lines table, records "
               "{\"module\", \"function\", \"embedding\"} in corpus order, each module's functions then one record "
               "with \"function\": null (the module: the sum of its functions), and optionally a TFRecord of "
               "tf.train.Examples. Equal to llvm-ir2vec-22 embeddings --level=func on each module.");
  embed->add_option("--corpus", o.CorpusDir, "The corpus (corpus_description.json and <module>.bc).")->required();
  embed->add_option("--vocab", o.VocabPath, "The IR2Vec vocabulary (JSON seed embeddings).")->required();
  embed->add_option("--output", o.OutputPath, "The JSON Lines table to write (atomically).")->required();
  embed->add_option("--tfrecord", o.TFRecordPath, "Also write the table as a TFRecord of tf.train.Examples.");
  embed->add_option("--passes", o.Passes,
                    "Run this opt pipeline on each module first (e.g. 'default<O2>'), as opt-22 -passes= would.");
  embed->add_option("--kind", kind, "symbolic (llvm-ir2vec's) or flow-aware.")
      ->check(CLI::IsMember({"symbolic", "flow-aware"}))
      ->capture_default_str();
  embed->add_option("--num_workers", o.Workers, "Modules embedded at once (default: one per hardware thread).");
  embed->add_option("--report", report,
                    "Also write {modules, functions, dimension, failed: [{module, reason}]} as JSON to this file.");
  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;
  installInterruptHandlers();
  o.Kind = kind == "flow-aware" ? EmbeddingKind::FlowAware : EmbeddingKind::Symbolic;

  auto summary = embedCorpus(o);
  if (!summary) {
    log::error(llvm::toString(summary.takeError()));
    return 1;
  }
  for (const auto &[module, reason] : summary->Failed)
    log::warning(module + ": left out: " + reason);
  if (!report.empty()) {
    nlohmann::ordered_json j;
    j["modules"] = summary->Modules;
    j["functions"] = summary->Functions;
    j["dimension"] = summary->Dimension;
    j["failed"] = nlohmann::ordered_json::array();
    for (const auto &[module, reason] : summary->Failed)
      j["failed"].push_back({{"module", module}, {"reason", reason}});
    if (llvm::Error e =
            writeFileAtomically(report, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")) {
      log::error("cannot write " + report + ": " + llvm::toString(std::move(e)));
      return 1;
    }
  }
  std::fprintf(stderr, "mlgo-ir2vec: %zu modules, %zu functions, dimension %u, %zu modules failed\n", summary->Modules,
               summary->Functions, summary->Dimension, summary->Failed.size());
  return 0;
}
