// mlgo-ir2vec: IR2Vec and MIR2Vec program embeddings over a whole corpus,
// in-process (libLLVM's IR2Vec and MIR2Vec classes) and in parallel.
#include "mlgo/embed/EmbeddingTable.h"
#include "mlgo/embed/TransE.h"
#include "mlgo/embed/Triplets.h"
#include "mlgo/embed/VocabularyJson.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/Log.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>

using namespace mlgo;

int main(int argc, char **argv) {
  CLI::App app{"IR2Vec program embeddings for MLGO corpora, computed in-process with LLVM 22's IR2Vec (no tool is "
               "spawned per module).",
               "mlgo-ir2vec"};
  app.get_formatter()->column_width(30);
  app.require_subcommand(1);

  EmbedCorpusOptions o;
  std::string kind = "symbolic", report, embedMode = "llvm", tripletMode = "llvm";
  CLI::App *embed = app.add_subcommand(
      "embed", "Embed every function (and module) of a corpus: one JSON Lines table, records "
               "{\"module\", \"function\", \"embedding\"} in corpus order, each module's functions then one record "
               "with \"function\": null (the module: the sum of its functions), and optionally a TFRecord of "
               "tf.train.Examples. Equal to llvm-ir2vec-22 embeddings --level=func on each module. With --mode=mir "
               "and a MIR2Vec vocabulary, the machine functions at the input of register allocation (what llc-22 "
               "-stop-before=greedy prints), each as llvm-ir2vec-22 embeddings --mode=mir embeds it.");
  embed->add_option("--corpus", o.CorpusDir, "The corpus (corpus_description.json and <module>.bc).")->required();
  embed
      ->add_option("--vocab", o.VocabPath,
                   "The vocabulary (JSON seed embeddings): IR2Vec's, or MIR2Vec's with --mode=mir.")
      ->required();
  embed
      ->add_option("--mode", embedMode,
                   "llvm: LLVM IR functions (IR2Vec); mir: machine functions compiled in-process to the input of "
                   "greedy register allocation, as llc-22 -stop-before=greedy leaves them (MIR2Vec). A vocabulary "
                   "of the other kind is an error before any module is compiled.")
      ->check(CLI::IsMember({"llvm", "mir"}))
      ->capture_default_str();
  embed->add_option("--output", o.OutputPath, "The JSON Lines table to write (atomically).")->required();
  embed->add_option("--tfrecord", o.TFRecordPath, "Also write the table as a TFRecord of tf.train.Examples.");
  embed->add_option("--passes", o.Passes,
                    "Run this opt pipeline on each module first (e.g. 'default<O2>'), as opt-22 -passes= would "
                    "(with --mode=mir: before codegen).");
  CLI::Option *kindOption =
      embed->add_option("--kind", kind, "symbolic (llvm-ir2vec's) or flow-aware; MIR2Vec has symbolic only.")
          ->check(CLI::IsMember({"symbolic", "flow-aware"}))
          ->capture_default_str();
  embed->add_option("--num_workers", o.Workers, "Modules embedded at once (default: one per hardware thread).");
  embed->add_option("--report", report,
                    "Also write {modules, functions, dimension, failed: [{module, reason}]} as JSON to this file.");

  TripletCorpusOptions t;
  std::string levels = "O0,O1,O2,O3", tripletReport;
  size_t memoryMb = 48;
  CLI::App *triplets = app.add_subcommand(
      "triplets", "Write an IR2Vec vocabulary's training data as OpenKE files (train2id.txt, entity2id.txt, "
                  "relation2id.txt): every module optimized in-process at a seeded choice among --opt_levels, its "
                  "triplets as llvm-ir2vec-22 triplets prints them, deduplicated over the corpus within a memory "
                  "budget (sorted runs spilled to disk and merged). With --mode=mir, the machine IR's triplets at "
                  "the input of register allocation (llc-22 -stop-before=greedy after the opt level) as "
                  "llvm-ir2vec-22 triplets --mode=mir prints them, and its entities.");
  triplets->add_option("--corpus", t.CorpusDir, "The corpus (corpus_description.json and <module>.bc).")->required();
  triplets->add_option("--output_dir", t.OutputDir, "Where the three files go (created; written atomically).")
      ->required();
  triplets
      ->add_option("--opt_levels", levels,
                   "Comma-separated opt levels (O0, O1, O2, O3, Os, Oz); each module gets one, drawn from the "
                   "seed and its name. One level: every module.")
      ->capture_default_str();
  triplets->add_option("--seed", t.Seed, "The seed of the opt level choice.")->capture_default_str();
  triplets
      ->add_option("--mode", tripletMode,
                   "llvm: LLVM IR (relations Type 0, Next 1, Arg<i> 2+i); mir: machine IR compiled in-process to "
                   "the input of greedy register allocation (relations Next 0, Arg<i> 1+i; entities are the "
                   "target's, so the corpus must be of one target).")
      ->check(CLI::IsMember({"llvm", "mir"}))
      ->capture_default_str();
  triplets->add_option("--num_workers", t.Workers, "Modules processed at once (default: one per hardware thread).");
  triplets
      ->add_option("--memory_mb", memoryMb,
                   "Triplets held in memory before a sorted run is spilled to disk (12 bytes each).")
      ->check(CLI::Range(size_t(1), size_t(1) << 20))
      ->capture_default_str();
  triplets->add_option("--report", tripletReport,
                       "Also write {mode, modules: [{module, opt_level, triplets, error}], distinct, max_relation, "
                       "spilled_runs} as JSON to this file.");

  TransEOptions transE;
  std::string trainDir, vocabOut, testFile, trainReport;
  CLI::App *train = app.add_subcommand(
      "train", "Train an IR2Vec vocabulary natively with TransE (the model LLVM's recipe trains with OpenKE) on "
               "mlgo-ir2vec triplets' files, multi-threaded, deterministic for a seed and --num_workers, and write "
               "it in the JSON layout IR2Vec reads (sections Opcodes, Types, Arguments, Predicates). From triplets "
               "--mode=mir (entities PhyReg_<class>, VirtReg_<class>), a MIR2Vec vocabulary: sections Opcodes, "
               "CommonOperands, PhysicalRegisters, VirtualRegisters, as -mir2vec-vocab-path reads them.");
  train->add_option("--input_dir", trainDir, "The directory of train2id.txt, entity2id.txt, relation2id.txt.")
      ->required();
  train->add_option("--output", vocabOut, "The vocabulary JSON to write (atomically).")->required();
  train->add_option("--dim", transE.Dimension, "Embedding dimension.")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  train->add_option("--epochs", transE.Epochs, "Passes over the triplets.")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  train->add_option("--seed", transE.Seed, "Seed of the initial vectors, the shuffles and the negatives.")
      ->capture_default_str();
  train->add_option("--batch_size", transE.BatchSize, "Triplets per SGD step.")
      ->check(CLI::Range(1u, 1u << 30))
      ->capture_default_str();
  train->add_option("--learning_rate", transE.LearningRate, "SGD step size.")->capture_default_str();
  train->add_option("--margin", transE.Margin, "Margin of the ranking loss.")->capture_default_str();
  train->add_option("--num_workers", transE.Threads,
                    "Threads (default: one per hardware thread); with the seed, "
                    "it decides the result.");
  train->add_option("--test_file", testFile,
                    "Held-out triplets (train2id format) whose raw link-prediction hits@10 the report gives.");
  train->add_option(
      "--report", trainReport,
      "Also write {mode, triplets, entities, relations, final_loss, hits_at_10_train, hits_at_10_test} as "
      "JSON to this file.");
  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;
  installInterruptHandlers();

  if (train->parsed()) {
    auto data = readTripletData(trainDir);
    if (!data) {
      log::error(llvm::toString(data.takeError()));
      return 1;
    }
    // The layout before training, so that triplets of no known mode fail
    // at once.
    auto layout = vocabularyLayout(*data, trainDir);
    if (!layout) {
      log::error(llvm::toString(layout.takeError()));
      return 1;
    }
    std::vector<Triplet> held;
    if (!testFile.empty()) {
      auto read = readTripletFile(testFile, data->Entities.size(), data->Relations.size());
      if (!read) {
        log::error(llvm::toString(read.takeError()));
        return 1;
      }
      held = std::move(*read);
    }
    TransEModel model = trainTransE(*data, transE);
    if (llvm::Error e = writeFileAtomically(vocabOut, vocabularyJson(*layout, model))) {
      log::error("cannot write " + vocabOut + ": " + llvm::toString(std::move(e)));
      return 1;
    }
    nlohmann::ordered_json j;
    j["mode"] = embeddingModeName(layout->Mode).str();
    j["triplets"] = data->Triplets.size();
    j["entities"] = data->Entities.size();
    j["relations"] = data->Relations.size();
    j["final_loss"] = model.FinalLoss;
    j["hits_at_10_train"] = hitsAt10(model, data->Triplets);
    j["hits_at_10_test"] =
        held.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(hitsAt10(model, held));
    if (!trainReport.empty())
      if (llvm::Error e = writeFileAtomically(trainReport, j.dump(2) + "\n")) {
        log::error("cannot write " + trainReport + ": " + llvm::toString(std::move(e)));
        return 1;
      }
    std::fprintf(stderr, "mlgo-ir2vec: %s\n", j.dump().c_str());
    return 0;
  }
  o.Kind = kind == "flow-aware" ? EmbeddingKind::FlowAware : EmbeddingKind::Symbolic;
  o.Mode = embedMode == "mir" ? EmbeddingMode::MIR : EmbeddingMode::LLVM;
  t.Mode = tripletMode == "mir" ? EmbeddingMode::MIR : EmbeddingMode::LLVM;
  if (embed->parsed() && o.Mode == EmbeddingMode::MIR && kindOption->count() && kind != "symbolic") {
    log::error("--kind=" + kind + ": MIR2Vec (--mode=mir) has symbolic embeddings only");
    return 1;
  }

  if (triplets->parsed()) {
    t.OptLevels.clear();
    for (llvm::StringRef rest = levels; !rest.empty();) {
      auto [level, tail] = rest.split(',');
      t.OptLevels.push_back(level.trim().str());
      rest = tail;
    }
    t.MemoryBudget = memoryMb * (size_t(1) << 20) / 12;
    if (const char *budget = std::getenv("MLGO_IR2VEC_TRIPLET_BUDGET")) // tests: a budget of a few triplets
      t.MemoryBudget = std::strtoull(budget, nullptr, 10);
    auto result = writeCorpusTriplets(t);
    if (!result) {
      log::error(llvm::toString(result.takeError()));
      return 1;
    }
    size_t failed = 0;
    for (const TripletModuleRecord &r : result->Modules)
      if (!r.Error.empty()) {
        ++failed;
        log::warning(r.Module + ": left out: " + r.Error);
      }
    if (!tripletReport.empty()) {
      nlohmann::ordered_json j;
      j["mode"] = tripletMode;
      j["modules"] = nlohmann::ordered_json::array();
      for (const TripletModuleRecord &r : result->Modules)
        j["modules"].push_back(
            {{"module", r.Module},
             {"opt_level", r.OptLevel},
             {"triplets", r.Triplets},
             {"error", r.Error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.Error)}});
      j["distinct"] = result->Distinct;
      j["max_relation"] = result->MaxRelation;
      j["spilled_runs"] = result->SpilledRuns;
      if (llvm::Error e = writeFileAtomically(tripletReport,
                                              j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")) {
        log::error("cannot write " + tripletReport + ": " + llvm::toString(std::move(e)));
        return 1;
      }
    }
    std::fprintf(stderr,
                 "mlgo-ir2vec: %zu modules, %zu distinct triplets, max relation %u, %zu spilled runs, %zu "
                 "modules failed\n",
                 result->Modules.size() - failed, result->Distinct, result->MaxRelation, result->SpilledRuns, failed);
    return 0;
  }

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
