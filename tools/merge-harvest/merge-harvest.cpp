// merge-harvest: join the shard directories of a sharded harvest-logs run
// (--shard=I/N or auto, one --output_dir per shard) into one harvest
// directory equal to a one-machine run.
#include "mlgo/run/HarvestMerge.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/Log.h"

#include <cstdio>

using namespace mlgo;

int main(int argc, char **argv) {
  CLI::App app{"Merge the output directories of a sharded harvest-logs run (shard I of N in the I-th SHARD_DIR) into "
               "one harvest directory equal to a one-machine run over the whole selection: the same logs/ tree, one "
               "harvest.jsonl and summary.json in plan order, and optionally the TFRecord dataset in plan order. "
               "Every shard is checked before anything is written: a missing shard or unfinished module is an "
               "error naming them (exit 1) unless --allow_partial. SIGINT/SIGTERM stop it with nothing written "
               "(exit 130).",
               "merge-harvest"};
  app.get_formatter()->column_width(36);
  MergeOptions o;
  std::string filter, verbosity = "INFO";
  bool quiet = false;
  app.add_option("SHARD_DIR", o.ShardDirs,
                 "The shards' --output_dir, in shard order: the I-th holds shard I/N, N = how many are given.")
      ->required();
  app.add_option("--corpus,--data_path", o.CorpusDir, "The corpus the shards harvested (to compute the plan).")
      ->required();
  app.add_option("--output_dir,--output-dir", o.OutputDir,
                 "The merged harvest directory. Built in a sibling staging directory and renamed into place; an "
                 "earlier merge there is replaced.")
      ->required();
  app.add_option("--tfrecord,--output_path", o.TFRecordPath,
                 "Also write the dataset (TFRecord of SequenceExample), modules in plan order, as harvest-logs "
                 "--tfrecord does; for explored shards (--explore), the kept trajectories in ml-compiler-opt's "
                 "imitation format.");
  app.add_option("--modules_filter,--module_filter", filter, "The shards' --modules_filter.");
  app.add_option("--sampling_rate", o.Selection.SamplingRate, "The shards' --sampling_rate.")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--seed", o.Selection.Seed, "The shards' --seed.")->capture_default_str();
  app.add_flag("--allow_partial", o.AllowPartial,
               "Merge the modules that are finished; list the absent ones (and shards) in summary.json's merge "
               "section. harvest-logs on the merged directory then finishes them.");
  app.add_flag("--link", o.HardLink,
               "Hard-link the logs instead of copying them (same file system; the shards must then stay unchanged).");
  app.add_option("--verbosity", verbosity, "Log level: DEBUG, INFO, WARNING or ERROR.")
      ->check(CLI::IsMember({"DEBUG", "INFO", "WARNING", "ERROR"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_flag("-q,--quiet", quiet, "Errors only.");
  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;
  log::setLevel(quiet ? log::Level::Error : *log::parseLevel(verbosity));
  if (!filter.empty())
    o.Selection.Filter = filter;

  // SIGINT/SIGTERM: the staging directory is removed and nothing is written.
  installInterruptHandlers();
  auto result = mergeHarvest(o);
  if (!result) {
    log::error(llvm::toString(result.takeError()));
    return interruptRequested() ? InterruptedExitCode : 1;
  }
  log::info("merged " + std::to_string(result->Merged) + " of " + std::to_string(result->Planned) + " modules (" +
            std::to_string(result->Logs) + " logs) from " + std::to_string(o.ShardDirs.size()) + " shards into " +
            o.OutputDir +
            (result->MissingModules.empty()
                 ? ""
                 : "; " + std::to_string(result->MissingModules.size()) + " absent (see summary.json)"));
  return 0;
}
