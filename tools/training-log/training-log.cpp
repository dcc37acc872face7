// training-log: read, check and convert MLGO training logs.
#include "mlgo/harvest/HarvestTrajectories.h"
#include "mlgo/log/DatasetFile.h"
#include "mlgo/log/LogCheck.h"
#include "mlgo/log/LogDataset.h"
#include "mlgo/log/LogDump.h"
#include "mlgo/log/LogInputs.h"
#include "mlgo/log/LogStats.h"
#include "mlgo/log/TFRecord.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/log/Vocab.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/CommandLine.h"

#include <cstdio>
#include <unistd.h>

using namespace mlgo;

namespace {

void fail(const std::string &message) { std::fprintf(stderr, "training-log: error: %s\n", message.c_str()); }

void writeOut(const std::string &text) { std::fwrite(text.data(), 1, text.size(), stdout); }

int dump(const std::string &path, const std::string &format) {
  auto reader = TrainingLogReader::open(path);
  if (!reader) {
    fail(llvm::toString(reader.takeError()));
    return 1;
  }
  llvm::raw_fd_ostream out(STDOUT_FILENO, /*shouldClose=*/false);
  llvm::Error e = dumpLog(**reader, format == "csv" ? DumpFormat::Csv : DumpFormat::JsonLines, out);
  out.flush();
  if (e) {
    fail(llvm::toString(std::move(e)));
    return 1;
  }
  return 0;
}

int trajectories(const std::string &harvestDir, const std::string &output) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto count = writeHarvestTrajectories(harvestDir, os);
  if (!count) {
    fail(llvm::toString(count.takeError()));
    return 1;
  }
  if (output.empty() || output == "-") {
    writeOut(text);
  } else if (llvm::Error e = writeFileAtomically(output, text)) {
    fail(llvm::toString(std::move(e)));
    return 1;
  }
  std::fprintf(stderr, "training-log: %zu trajectories, %zu decisions; %zu failed modules left out\n", count->Modules,
               count->Decisions, count->FailedSkipped);
  return 0;
}

int stats(const std::vector<std::string> &files, bool json) {
  LogStats stats;
  for (const std::string &file : files) {
    auto reader = TrainingLogReader::open(file);
    if (reader)
      stats.add(**reader);
    else
      stats.addError(llvm::toString(reader.takeError()));
  }
  if (json) {
    writeOut(stats.toJson().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  } else {
    writeOut(stats.toText());
    for (const std::string &e : stats.errors())
      fail(e);
  }
  return stats.errors().empty() ? 0 : 1;
}

int validate(const std::vector<std::string> &files, bool lenient) {
  int status = 0;
  for (const std::string &file : files) {
    auto reader = TrainingLogReader::open(file);
    auto check = reader ? checkLog(**reader, !lenient) : llvm::Expected<LogCheck>(reader.takeError());
    if (!check) {
      fail(llvm::toString(check.takeError()));
      status = 1;
      continue;
    }
    writeOut("ok: " + file + ": " + check->describe() + "\n");
  }
  return status;
}

int toTFRecord(const std::vector<std::string> &files, const std::string &output, const std::string &rewardText,
               const std::string &keysFile) {
  auto reward = RewardPolicy::parse(rewardText);
  if (!reward) {
    fail(llvm::toString(reward.takeError()));
    return 2;
  }
  std::vector<DatasetInput> inputs;
  for (const std::string &file : files)
    inputs.push_back({file, *reward});
  auto totals = writeTFRecordDataset(inputs, output, keysFile);
  if (!totals) {
    fail(llvm::toString(totals.takeError()));
    return 1;
  }
  size_t records = totals->Records, steps = totals->Steps;
  std::fprintf(stderr, "training-log: wrote %zu records (%zu steps) from %zu logs to %s\n", records, steps,
               files.size(), output.c_str());
  return 0;
}

int vocab(const std::vector<std::string> &files, const std::string &outputDir, size_t buckets) {
  VocabBuilder builder;
  for (const std::string &file : files) {
    auto reader = TrainingLogReader::open(file);
    if (!reader) {
      fail(llvm::toString(reader.takeError()));
      return 1;
    }
    if (llvm::Error e = builder.add(**reader)) {
      fail(llvm::toString(std::move(e)));
      return 1;
    }
  }
  if (llvm::Error e = builder.write(outputDir, buckets)) {
    fail(llvm::toString(std::move(e)));
    return 1;
  }
  for (const std::string &name : builder.approximate())
    std::fprintf(stderr, "training-log: %s had more distinct values than fit in memory; its buckets are approximate\n",
                 name.c_str());
  for (const std::string &name : builder.embeddingsLeftOut())
    std::fprintf(stderr,
                 "training-log: %s: an IR2Vec embedding, left out (ml-compiler-opt normalises embeddings "
                 "separately)\n",
                 name.c_str());
  std::fprintf(stderr, "training-log: wrote %zu .buckets files to %s\n", builder.histograms().size(),
               outputDir.c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Read, check and convert MLGO training logs (LLVM's -training-log format, and what "
               "harvest-logs writes).",
               "training-log"};
  app.get_formatter()->column_width(34);
  app.require_subcommand(1);

  std::string dumpLog, format = "jsonl";
  CLI::App *dumpCmd = app.add_subcommand("dump", "Print every observation with named features and its outcome.");
  dumpCmd->add_option("LOG", dumpLog, "The log file ('-' for standard input).")->required();
  dumpCmd
      ->add_option("--format", format,
                   "jsonl: one JSON object per observation; csv: a header row, then one "
                   "row per observation (multi-element tensors as name[i] columns).")
      ->check(CLI::IsMember({"jsonl", "csv"}))
      ->capture_default_str();

  std::vector<std::string> statLogs;
  bool statsJson = false;
  CLI::App *statsCmd = app.add_subcommand("stats", "Contexts, observations, per-feature min/max/mean and the "
                                                   "decision histogram over one or more logs.");
  statsCmd->add_option("LOG", statLogs, "Log files, or directories of *.log files.")->required();
  statsCmd->add_flag("--json", statsJson, "Print JSON (corpus_formats/training_log_stats.schema.json).");

  std::vector<std::string> validateLogs;
  bool lenient = false;
  CLI::App *validateCmd = app.add_subcommand("validate", "Exit 0 only if every log parses completely and (unless "
                                                         "--lenient) every context line has an observation after it.");
  validateCmd->add_option("LOG", validateLogs, "Log files, or directories of *.log files.")->required();
  validateCmd->add_flag("--lenient", lenient,
                        "Accept context lines without observations (LLVM's development-mode regalloc logs have "
                        "them; LLVM's log_reader.py fails on them).");

  std::vector<std::string> recordLogs;
  std::string output, reward = "zero", keysFile;
  CLI::App *recordCmd = app.add_subcommand(
      "to-tfrecord", "Write the default-trace dataset (TFRecord of tf.train.SequenceExample) that ml-compiler-opt's "
                     "trainers read: one record per log for the inliner, one per function for regalloc.");
  recordCmd->add_option("LOG", recordLogs, "Log files, or directories of *.log files.")->required();
  recordCmd->add_option("--output,--output_path", output, "The TFRecord file to write.")->required();
  recordCmd
      ->add_option("--reward", reward,
                   "How each step's reward is filled: zero (0.0, as default traces are), score (the logged "
                   "outcome of the step, 0.0 where none), or constant:X.")
      ->capture_default_str();
  recordCmd->add_option("--keys_file", keysFile, "Also write each record's key, one per line.");

  std::vector<std::string> vocabLogs;
  std::string vocabDir;
  size_t buckets = 1000;
  CLI::App *vocabCmd = app.add_subcommand("vocab", "Write the <feature>.buckets quantile files that "
                                                   "ml-compiler-opt's generate_vocab makes, in one streaming pass.");
  vocabCmd->add_option("LOG", vocabLogs, "Log files, or directories of *.log files.")->required();
  vocabCmd->add_option("--output_dir", vocabDir, "Where the .buckets files go (created).")->required();
  vocabCmd->add_option("--num_buckets", buckets, "Quantile edges per feature.")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  std::string harvestDir, trajectoriesOutput;
  CLI::App *trajectoriesCmd = app.add_subcommand(
      "trajectories", "Write the decisions an inliner harvest took, one JSON line per ok module ({\"module\", "
                      "\"decisions\"}, corpus_formats/trajectories.schema.json), for harvest-logs "
                      "--policy=replay:FILE.");
  trajectoriesCmd->add_option("HARVEST", harvestDir, "The harvest's output directory (its harvest.jsonl and logs/).")
      ->required();
  trajectoriesCmd->add_option("--output", trajectoriesOutput, "The file to write (default: standard output).");

  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;

  if (*dumpCmd)
    return dump(dumpLog, format);
  if (*trajectoriesCmd)
    return trajectories(harvestDir, trajectoriesOutput);
  std::vector<std::string> *inputs = *statsCmd      ? &statLogs
                                     : *validateCmd ? &validateLogs
                                     : *recordCmd   ? &recordLogs
                                                    : &vocabLogs;
  auto files = expandLogInputs(*inputs);
  if (!files) {
    fail(llvm::toString(files.takeError()));
    return 1;
  }
  if (*statsCmd)
    return stats(*files, statsJson);
  if (*validateCmd)
    return validate(*files, lenient);
  if (*recordCmd)
    return toTFRecord(*files, output, reward, keysFile);
  return vocab(*files, vocabDir, buckets);
}
