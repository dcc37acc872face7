// harvest-logs: training logs for every module of a corpus, from the ML
// inliner advisor of a stock LLVM (interactive mode) or a TFLite-built one
// (development mode).
#include "mlgo/compile/CompileServerChoice.h"
#include "mlgo/compile/ModeSelection.h"
#include "mlgo/compile/PluginMode.h"
#include "mlgo/explore/Exploration.h"
#include "mlgo/harvest/HarvestLink.h"
#include "mlgo/harvest/IR2VecVocabulary.h"
#include "mlgo/run/HarvestRun.h"
#include "mlgo/run/PolicyBatch.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cstdio>
#include <future>
#include <optional>

using namespace mlgo;

// The mode that runs o.Policy (ModeSelection.h), and whether it can run at
// all with this compiler; the error says why not.
llvm::Error choosePolicyMode(HarvestOptions &o, const std::string &mode, const std::string &pluginPath,
                             const std::string &tool, const CompilerCapabilities *caps, const std::string &policy,
                             const std::string &problem) {
  auto fail = [](const std::string &message) { return llvm::createStringError("%s", message.c_str()); };
  ModeRequest request{mode, o.Decisions, o.Compiler, o.Policy, pluginPath, tool, std::min(o.TimeoutSeconds, 30.0)};
  auto choice = chooseMode(request, *caps);
  if (!choice)
    return choice.takeError();
  o.Mode = choice->Mode;
  o.ModeReason = choice->Reason;
  o.PluginPath = pluginPath;
  log::info(std::string("compiler: ") + tool + " (LLVM " + std::to_string(caps->MajorVersion) + "), " +
            (caps->DevelopmentMode ? "with" : "without") + " development mode; using " + modeName(o.Mode) + " mode (" +
            o.ModeReason + ")");
  if (mode == "auto" && !choice->PluginFallback.empty() && o.Decisions == Problem::Inliner)
    log::warning("not using the in-process plugin: " + choice->PluginFallback);
  if (o.Mode != AdvisorMode::Plugin && o.Policy.How == PolicySpec::Kind::InProcess) {
    return fail("--policy=" + policy + " runs only inside the compiler: use --mode=plugin (or auto)");
  }
  if (o.Policy.How == PolicySpec::Kind::Replay && o.Decisions != Problem::Inliner)
    return fail("--policy=" + policy + " replays inlining decisions: it needs --problem=inliner");
  if (o.Mode == AdvisorMode::Development && !caps->DevelopmentMode) {
    if (o.Policy.How == PolicySpec::Kind::Model)
      return fail("--policy=model:DIR needs a development-mode (TFLite) LLVM, and " + tool +
                  " has none; evaluate the same directory natively instead: --policy=tflite:DIR");
    return fail(tool + " has no development mode (-training-log is unknown: it is not built with TFLite); use "
                       "--mode=interactive");
  }
  if (o.Mode == AdvisorMode::Interactive) {
    if (o.Policy.How == PolicySpec::Kind::Model) {
      return fail("--policy=model:DIR needs a development-mode (TFLite) LLVM; with " + tool +
                  " evaluate the same directory natively instead: --policy=tflite:DIR");
    }
    if (isRegalloc(o.Decisions) && o.Policy.How == PolicySpec::Kind::Default) {
      return fail("--policy=default: in interactive mode the compiler sends no default " + problem +
                  " decision, so default regalloc traces need a development-mode (TFLite) LLVM (--mode=development) or "
                  "the regalloc plugin (--mode=plugin). "
                  "Interactively, use --policy=random:P or --policy=exec:CMD");
    }
    if (o.Decisions == Problem::Inliner && caps->MajorVersion > 0 && caps->MajorVersion < 21) {
      return fail(tool + " is LLVM " + std::to_string(caps->MajorVersion) +
                  ", whose interactive inliner writes the default decision into the callee_basic_block_count "
                  "feature instead of inlining_default (fixed by llvm-project#141453): use LLVM 21 or later, "
                  "e.g. --opt_path=opt-22");
    }
  } else if (o.Mode == AdvisorMode::Development &&
             (o.Policy.How == PolicySpec::Kind::Random || o.Policy.How == PolicySpec::Kind::Exec ||
              o.Policy.How == PolicySpec::Kind::TFLite || o.Policy.How == PolicySpec::Kind::Replay)) {
    return fail("--policy=" + policy + " answers decisions itself, which needs --mode=interactive");
  }

  return llvm::Error::success();
}

int main(int argc, char **argv) {
  CLI::App app{"Compile every module of an MLGO corpus with the ML inliner advisor in place, in parallel, and write "
               "one training log per module (OUT/logs/<module>.log, LLVM's development-mode format: the features, "
               "inlining_default, inlining_decision), a journal (OUT/harvest.jsonl, one line per module), "
               "OUT/summary.json, and optionally the TFRecord dataset. On a stock LLVM the harvester is the host of "
               "the advisor's interactive channel; on a TFLite build it can use development mode.",
               "harvest-logs"};
  app.get_formatter()->column_width(36);
  HarvestOptions o;
  std::string compiler = "auto", mode = "auto", policy = "default", shard = "0/1", verbosity = "INFO", filter,
              problem = "inliner";
  bool quiet = false, strict = false;
  int numWorkers = 0;
  app.add_option("--corpus,--data_path", o.CorpusDir, "The corpus root (holding corpus_description.json).")->required();
  app.add_option("--output_dir,--output-dir", o.OutputDir, "Where logs, journal and summary go. Created if missing.")
      ->required();
  app.add_option("--num_workers", numWorkers, "Modules compiled at once (default: one per hardware thread).")
      ->check(CLI::PositiveNumber);
  app.add_option("--problem", problem,
                 "inliner: the ML inliner advisor. regalloc-evict / regalloc-priority: the greedy register "
                 "allocator's eviction or priority advisor (one context per function).")
      ->check(CLI::IsMember({"inliner", "regalloc-evict", "regalloc-priority"}))
      ->capture_default_str();
  app.add_option("--compiler", compiler,
                 "opt: opt with --passes, then llc to an object for the native size (inliner only). clang: each "
                 "module's own command line (.cmd, or the corpus' global_command_override), as ml-compiler-opt "
                 "compiles. llc: llc on the module (regalloc, for modules that are already optimized IR). auto: opt "
                 "for the inliner, clang for regalloc.")
      ->check(CLI::IsMember({"auto", "opt", "clang", "llc"}))
      ->capture_default_str();
  app.add_option("--opt_path", o.Compiler.Opt, "The opt to run.")->capture_default_str();
  app.add_option("--llc_path", o.Compiler.Llc, "The llc to run (--compiler=opt).")->capture_default_str();
  app.add_option("--clang_path", o.Compiler.Clang, "The clang to run (--compiler=clang).")->capture_default_str();
  app.add_option("--passes", o.Compiler.Passes, "The opt pipeline (--compiler=opt).")->capture_default_str();
  app.add_option("--mode", mode,
                 "plugin: the compiler loads the inliner plugin (--plugin_path), which decides and logs in-process "
                 "(inliner; default, random and in-process policies); for --problem=regalloc-evict or "
                 "regalloc-priority with --policy=default, random:P[:SEED] or tflite:DIR, the register allocation "
                 "plugin (-load libMLGORegAllocAdvisor.so), which logs the default advisor's (or decides and logs the "
                 "hosted policy's) decisions with LLVM's features and RegAllocScore. interactive: the harvester "
                 "answers every "
                 "decision over a FIFO channel. development: the compiler writes -training-log itself (a TFLite "
                 "build). auto: the plugin when it loads cleanly into the compiler (probed once; regalloc: only "
                 "default traces, when the compiler has no development mode), else "
                 "development when the compiler has it, else interactive; the first log line and summary.json say "
                 "which and why.")
      ->check(CLI::IsMember({"auto", "interactive", "development", "plugin"}))
      ->capture_default_str();
  std::string pluginPath = defaultInlinerPluginPath();
  app.add_option("--plugin_path", pluginPath,
                 "The plugin for --mode=plugin/auto (regalloc problems: "
                 "libMLGORegAllocAdvisor.so beside the inliner plugin, unless given).")
      ->capture_default_str();
  std::string compileServer = "auto";
  app.add_option("--compile_server", compileServer,
                 "on: run opt and llc in warm children of mlgo-compile-server (LLVM's start-up paid once per worker, "
                 "outputs byte-identical to the exec'd tools). off: exec opt and llc per module. auto: on when the opt "
                 "and llc this run would exec are the LLVM harvest-logs is built with and the server starts; clang "
                 "is always exec'd. summary.json's compile_server says which and why.")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  o.CompileServerPath = defaultCompileServerPath();
  app.add_option("--compile_server_path", o.CompileServerPath, "The mlgo-compile-server for --compile_server.")
      ->capture_default_str();
  app.add_option("--policy", policy,
                 "default: the compiler's own decisions (NoInference). random:P[:SEED]: inline with probability P. "
                 "exec:CMD: a policy process per worker that reads the compiler's stream on stdin and answers "
                 "8-byte decisions on stdout. model:DIR: a TFLite model, development mode only. tflite:DIR: the same "
                 "policy directory (model.tflite + output_spec.json) evaluated natively by the harvester, "
                 "interactive mode (no TFLite LLVM needed). replay:FILE: each module's decisions as recorded in FILE "
                 "(JSON Lines {\"module\", \"decisions\"}, e.g. from `training-log trajectories HARVEST`); a module "
                 "missing from FILE, or asking for more or fewer decisions, fails as policy_error (plugin_failed when "
                 "the plugin is asked for more).")
      ->capture_default_str();
  std::vector<std::string> policies;
  app.add_option("--policies", policies,
                 "Batch evaluation: harvest each of these policies (comma-separated --policy specs, e.g. "
                 "default,tflite:p0,tflite:p1) over the same modules, each into OUT/policies/<k>/, sharing one "
                 "baseline cache (--baseline_cache, else OUT/baselines) so that each module's default size is "
                 "compiled once; then write OUT/evaluation.jsonl (policy x module: status, native size, default "
                 "size, reward, decisions) and OUT/evaluation.json (per-policy totals). A policy that cannot run "
                 "costs its own cells only.")
      ->delimiter(',')
      ->excludes("--policy");
  app.add_option("--modules_filter,--module_filter", filter,
                 "Only modules whose name matches this regex at its start (Python re.match).");
  app.add_option("--sampling_rate", o.Selection.SamplingRate,
                 "Harvest int(N * R) modules, one drawn from each of as many equal slices of the size-sorted corpus.")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--seed", o.Selection.Seed, "Seed for --sampling_rate and random policies.")->capture_default_str();
  app.add_option("--shard", shard,
                 "I/N: every N-th module of the size-sorted selection, from the I-th (0-based), so N machines each "
                 "take one shard (N < 2^32); auto/N (or auto): from a Slurm array job (the task id is the shard "
                 "index; plain auto only for an array 0-<COUNT-1>) or a Kubernetes Indexed Job (docs/cluster.md); "
                 "the journal records I/N and another shard spec is refused; merge the shards with merge-harvest.")
      ->capture_default_str();
  app.add_option("--compilation_timeout", o.TimeoutSeconds,
                 "Seconds before a compile (and its process group) is killed and the module reported as timeout.")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--force", o.Force, "Redo modules that an earlier run into the same --output_dir finished.");
  app.add_flag("--trust_corpus_commands", o.TrustCorpusCommands,
               "Run each module's .cmd (or global_command_override) as it is (a driver line with -c added). "
               "Without it, a line with an argument starting with @ (a response file), a flag that loads code "
               "(-load, -fpass-plugin=, ...), sets up the driver (--config=, ...), writes a file other than the "
               "object (-stats-file=, -o, ...) or copies one into it, is not a clang-22 option, or an -mllvm option "
               "off the reviewed allow-list fails that module as unsafe_command_line, and a driver line runs as the "
               "one cc1 job clang's driver plans for it (docs/security.md). Compiles stay confined by Landlock "
               "either way.");
  app.add_option("--compiler_writable_dir", o.CompilerWritableDirs,
                 "A directory the compiles may also write to (repeatable): Landlock lets each compile write only "
                 "in its work directory, so a compiler wrapper that keeps a cache or log elsewhere needs this. "
                 "It is readable too.")
      ->check(CLI::ExistingDirectory);
  app.add_option("--compiler_readable_dir", o.CompilerReadableDirs,
                 "A directory the compiles may also read (repeatable): Landlock lets each compile read only its "
                 "toolchain, the system's shared libraries, its work directory, its module's bitcode and the files "
                 "harvest-logs passes, so an input its command line names elsewhere (a profile, a header) needs "
                 "this; without it that compile fails with 'Permission denied'.")
      ->check(CLI::ExistingPath);
  app.add_option("--tfrecord,--output_path", o.TFRecordPath,
                 "Also write the dataset ml-compiler-opt trains on (TFRecord of SequenceExample), modules in plan "
                 "order. With --explore: the kept trajectories in the format of its imitation-learning trainer "
                 "(every int64 feature, action, reward, module_name, label, policy_label per step), beside "
                 "OUT/profile_max.json and OUT/profile_pol.json.");
  app.add_option("--explicit_temps_dir", o.ExplicitTempsDir,
                 "Keep each module's work directory (compiler outputs, stderr) under this directory.");
  app.add_option("--progress_interval", o.ProgressInterval, "Seconds between progress reports; 0 turns them off.")
      ->capture_default_str();
  app.add_option("--verbosity", verbosity, "Log level: DEBUG, INFO, WARNING or ERROR.")
      ->check(CLI::IsMember({"DEBUG", "INFO", "WARNING", "ERROR"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_flag("-q,--quiet", quiet, "Errors only.");
  app.add_flag("--strict", strict, "Exit 3 when any module failed or timed out.");
  app.add_option("--baseline_cache", o.BaselineCacheDir,
                 "A directory of default-policy native sizes (the rewards' baselines) shared with other runs: each "
                 "module's baseline is compiled once for all harvests that name it, keyed by the module's bitcode and "
                 "command line, the compilers and the code generation flags. Safe for concurrent runs, on one machine "
                 "or a shared file system; a damaged or foreign entry is recomputed. With --link it also keeps the "
                 "default policy's linked size (keyed by the modules' keys and the template), against which other "
                 "policies' links are then compared (summary.json's linked.baseline).");
  app.add_flag("--decision_sites", o.DecisionSites,
               "Plugin mode: also write logs/<module>.sites.jsonl, which call site each decision of the log was about "
               "(caller, callee, site ordinal, debug location, default and policy decision; one record per "
               "observation, in log order). The log itself is unchanged. Other modes write none and say why.");
  unsigned explore = 0;
  std::string exploreOrder = "uncertain";
  app.add_option("--explore", explore,
                 "Inliner: after each module's base trajectory (the --policy: default, random:P:SEED, tflite:DIR or "
                 "exec:CMD), "
                 "up to K more, "
                 "each replaying the newest one up to a step, flipping it and following the base policy afterwards; "
                 "the smallest native size is kept in logs/<module>.log (ties go to the base). OUT/explore.jsonl lists "
                 "every trajectory, summary.json's explore the totals; each round is a replay harvest in "
                 "OUT/explore/round-<r>/. With --policies, each policy is a base policy, explored in "
                 "OUT/policies/<k>/, and evaluation.json gives its kept totals (and its base ones in explore). With "
                 "--link, the kept trajectories' program is linked (summary.json's explore.linked compares it with "
                 "the base's). Explored shards merge with merge-harvest. 0: the plain harvest.")
      ->capture_default_str();
  app.add_option(
         "--explore_order", exploreOrder,
         "Which step an exploration flips, after the previous flip: uncertain (the one the base policy was "
         "least sure of: for the default heuristic the smallest |threshold - inline cost|, which the plugin "
         "reports, so --mode=plugin, and the base harvest writes sites files; for a tflite: policy the "
         "smallest |yes - no| of its logged inlining_logits; for an exec: policy the certainty it sends after "
         "each decision, asked for with MLGO_POLICY_CERTAINTY=1), first (the next one) or random:SEED "
         "(uniformly drawn, seeded per module and round). rollouts:ORDER (rollouts alone: "
         "rollouts:uncertain): per-decision rollouts instead of a chain: every explored trajectory flips one "
         "step of the base trajectory and follows the base policy after it, up to K steps per module in ORDER "
         "(the least certain first, first to last, or a permutation seeded per module); a K at least a "
         "module's decisions rolls out every one. explore.jsonl is then the rollout table (trajectory 0: the "
         "base's size), and the kept trajectory the best single flip. search:ORDER: sweeps of rollouts, each from "
         "the smallest trajectory of the sweep before while it is smaller than its parent, K trajectories per "
         "module at most; no module ends larger than its base. Neither is forked (--explore_fork).")
      ->capture_default_str();
  bool exploreFork = true;
  app.add_option("--explore_fork", exploreFork,
                 "With --explore in plugin mode through the compile server (opt, an in-process base policy, "
                 "--explore_order uncertain or first, not rollouts): each base compile also runs its module's explored "
                 "trajectories, forking at the decision each one flips, so that an exploration does not compile its "
                 "prefix again; the rounds take those trajectories (summary.json's explore.forked counts them) and "
                 "compile only the rest. The result is the same either way; false compiles every trajectory whole.")
      ->capture_default_str();
  std::string ir2vecVocab, ir2vecKind;
  app.add_option("--ir2vec_vocab", ir2vecVocab,
                 "An IR2Vec vocabulary (JSON seed embeddings: sections Opcodes, Types, Arguments). The inliner then "
                 "also sends callee_embedding and caller_embedding (float [dim]), logged before inlining_default: "
                 "sets -ml-inliner-ir2vec-vocab-file and -ir2vec-vocab-path, in every mode. Its SHA-256 is recorded "
                 "in the journal's options header.");
  app.add_option("--ir2vec_kind", ir2vecKind, "With --ir2vec_vocab: the embedding kind (default: LLVM's, symbolic).")
      ->check(CLI::IsMember({"symbolic", "flow-aware"}));
  std::string linkTemplate;
  app.add_option("--link", linkTemplate,
                 "After the modules are compiled, link their objects (in link order, then --link_extra) with this "
                 "command, split as shell words: {objects} (a word of its own) becomes the objects, {output} the "
                 "binary (OUT/link/linked), e.g. 'clang-22 -fuse-ld=lld {objects} -lm -o {output}'. The linker is "
                 "confined to write only in OUT/link/ and to read only the objects, its toolchain, the system's "
                 "libraries, --link_extra, what the template names and --compiler_readable_dir, its memory bounded "
                 "(--link_memory_limit), and killed after --link_timeout; an object that asks the linker to read "
                 "other files (#pragma comment(lib), .deplibs) is refused; summary.json's linked records "
                 "its sizes (text, data, bss, allocated, as llvm-size counts them), the command and the status. Not "
                 "attempted when a module failed (a partial link would mislead). Exit 4 when the link cannot be made. "
                 "In opt mode llc-22 makes non-PIC objects: link with -no-pie. With --policies, one link per policy "
                 "(OUT/policies/<k>/link/linked), compared with the default policy's in evaluation.json.");
  app.add_option("--link_extra", o.Link.ExtraObjects,
                 "With --link: an object or archive without bitcode (e.g. from an assembly source) linked after the "
                 "modules' objects (repeatable, in this order).");
  app.add_option("--link_order", o.Link.OrderFile,
                 "With --link: a file of module names, one per line, in the order the build linked them (default: "
                 "the order extract-ir recorded in the corpus' link_order.json, else the corpus' module order). A "
                 "name the corpus lacks, or a harvested module it leaves out, is an error.");
  app.add_flag("--keep_objects", o.Link.KeepObjects,
               "With --link: keep the objects (OUT/.mlgo-harvest/objects/) after a successful link; by default "
               "they are removed once linked (a failed link keeps them, so a rerun links without recompiling; a "
               "rerun after a successful link compiles the modules again).");
  app.add_option("--link_timeout", o.Link.TimeoutSeconds,
                 "With --link: seconds before the linker (and its process group) is killed; the link is then "
                 "'timeout'.")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--link_memory_limit", o.Link.MemoryLimitMiB,
                 "With --link: the most memory, in MiB, the linker may allocate (its heap: RLIMIT_DATA, which the "
                 "files it maps do not count against); a linker that needs more fails, and the link is 'failed' "
                 "saying so. 0: no bound.")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40))
      ->capture_default_str();
  bool noFsync = false;
  app.add_flag("--no_fsync", noFsync,
               "Do not fdatasync outputs before the journal names them: faster, but after a power loss (not a crash of "
               "the process) a journaled file may be empty. Default: durable.");
  std::vector<std::string> versionDetails = {"Default compilers: " + CompilerSettings{}.Opt + " and " +
                                             CompilerSettings{}.Llc + " (inliner), " + CompilerSettings{}.Clang +
                                             " (regalloc)"};
  if (std::optional<int> exit = parseCommandLine(app, argc, argv, versionDetails))
    return *exit;
  log::setLevel(quiet ? log::Level::Error : *log::parseLevel(verbosity));
  installInterruptHandlers();
  setDurableWrites(!noFsync);

  auto usage = [](const std::string &message) {
    std::fprintf(stderr, "harvest-logs: error: %s\n", message.c_str());
    return 2;
  };
  o.Decisions = *parseProblem(problem);
  if (isRegalloc(o.Decisions) && app.count("--plugin_path") == 0)
    pluginPath = defaultRegallocPluginPath();
  if (compiler == "auto")
    compiler = isRegalloc(o.Decisions) ? "clang" : "opt";
  o.Compiler.Kind = compiler == "clang" ? CompilerKind::Clang
                    : compiler == "llc" ? CompilerKind::Llc
                                        : CompilerKind::Opt;
  if (isRegalloc(o.Decisions) && o.Compiler.Kind == CompilerKind::Opt)
    return usage("--compiler=opt runs no register allocator; use --compiler=clang or --compiler=llc for " + problem);
  if (o.Decisions == Problem::Inliner && o.Compiler.Kind == CompilerKind::Llc)
    return usage("--compiler=llc runs no inliner; use --compiler=opt or --compiler=clang");
  if (!ir2vecKind.empty() && ir2vecVocab.empty())
    return usage("--ir2vec_kind needs --ir2vec_vocab");
  if (!ir2vecVocab.empty()) {
    if (o.Decisions != Problem::Inliner)
      return usage("--ir2vec_vocab: IR2Vec embedding features are the inliner's (--problem=inliner)");
    auto vocabulary = checkIR2VecVocabulary(ir2vecVocab);
    if (!vocabulary) {
      log::error(llvm::toString(vocabulary.takeError()));
      return 1;
    }
    o.IR2VecVocab = vocabulary->Path;
    o.IR2VecVocabSha256 = vocabulary->Sha256;
    o.IR2VecDimension = vocabulary->Dimension;
    o.IR2VecKind = ir2vecKind;
  }
  o.NumWorkers = static_cast<unsigned>(numWorkers);
  if (!filter.empty())
    o.Selection.Filter = filter;
  if (quiet)
    o.ProgressInterval = 0;
  if (llvm::Error e = parseShard(shard, o.Selection))
    return usage(llvm::toString(std::move(e)));
  std::vector<PolicySpec> batchSpecs;
  for (const std::string &text : policies) {
    auto parsed = parsePolicy(text);
    if (!parsed)
      return usage("--policies: " + text + ": " + llvm::toString(parsed.takeError()));
    batchSpecs.push_back(*parsed);
  }
  // One dataset path would be written by every policy in turn.
  if (!policies.empty() && !o.TFRecordPath.empty())
    return usage("--tfrecord with --policies: each policy's harvest is its own dataset (OUT/policies/<k>/); write one "
                 "with merge-harvest --tfrecord or the Python package, or harvest that policy alone");
  auto spec = parsePolicy(policies.empty() ? policy : "default");
  if (!spec)
    return usage(llvm::toString(spec.takeError()));
  o.Policy = *spec;
  bool linkCompanions = !o.Link.ExtraObjects.empty() || !o.Link.OrderFile.empty() || o.Link.KeepObjects ||
                        app.count("--link_memory_limit");
  if (linkTemplate.empty() && linkCompanions)
    return usage("--link_extra, --link_order, --keep_objects and --link_memory_limit need --link");
  // A search or rollouts without a budget would be a plain harvest that ignores them.
  if (!explore && (app.count("--explore_order") || app.count("--explore_fork")))
    return usage("--explore_order and --explore_fork need --explore=K with K > 0 (with rollouts: or search:, K is "
                 "each module's budget of explored trajectories)");
  if (!linkTemplate.empty()) {
    auto words = parseLinkTemplate(linkTemplate);
    if (!words)
      return usage(llvm::toString(words.takeError()));
    // A shard or a sample holds part of the program: its link would mislead.
    if (o.Selection.ShardCount > 1)
      return usage("--link with --shard: each shard compiles part of the program, and a partial link would mislead; "
                   "harvest unsharded to link");
    if (o.Selection.SamplingRate < 1.0)
      return usage("--link with --sampling_rate below 1: a sample of the modules is not the program");
    o.Link.Template = linkTemplate;
    o.Link.Words = std::move(*words);
    // llc-22's objects are not position-independent: warned before an hour of compiles, not after.
    bool nonPie = std::any_of(o.Link.Words.begin(), o.Link.Words.end(), [](const std::string &w) {
      return w == "-no-pie" || w == "-static" || w == "--no-pie" || w == "-Wl,-no-pie";
    });
    if (o.Compiler.Kind != CompilerKind::Clang && !nonPie)
      log::warning("--link: " + compiler +
                   " mode's objects are compiled with llc's static relocation model, which "
                   "a PIE link (Debian's default) refuses: add -no-pie to the template (docs/harvest-linking.md)");
  }

  const std::string &tool = o.Compiler.Kind == CompilerKind::Opt   ? o.Compiler.Opt
                            : o.Compiler.Kind == CompilerKind::Llc ? o.Compiler.Llc
                                                                   : o.Compiler.Clang;
  // The compile server's probe depends only on the flags: it runs beside
  // the compiler's and the plugin's (each a few tenths of a second).
  struct ServerChoice {
    std::optional<CompileServerDecision> Decision;
    std::string Error;
  };
  CompileServerRequest serverRequest{compileServer, o.Compiler, o.CompileServerPath};
  std::future<ServerChoice> serverChoice = std::async(std::launch::async, [serverRequest] {
    ServerChoice choice;
    auto decision = chooseCompileServer(serverRequest);
    if (decision)
      choice.Decision = *decision;
    else
      choice.Error = llvm::toString(decision.takeError());
    return choice;
  });
  auto caps = compilerCapabilities(tool, o.Compiler.Kind, o.Decisions);
  if (!caps) {
    log::error(llvm::toString(caps.takeError()));
    return 1;
  }
  // A batch: each policy's mode and whether it can run, decided alike.
  std::vector<BatchPolicy> batch;
  for (size_t k = 0; k < batchSpecs.size(); ++k) {
    BatchPolicy p{policies[k], o, ""};
    p.Options.Policy = batchSpecs[k];
    if (llvm::Error e = choosePolicyMode(p.Options, mode, pluginPath, tool, &*caps, policies[k], problem))
      p.SetupError = llvm::toString(std::move(e));
    batch.push_back(std::move(p));
  }
  if (batch.empty())
    if (llvm::Error e = choosePolicyMode(o, mode, pluginPath, tool, &*caps, policy, problem)) {
      log::error(llvm::toString(std::move(e)));
      return 1;
    }

  if (o.DecisionSites && !decisionSitesWritten(o))
    log::warning("--decision_sites: " + decisionSitesUnavailable(o));

  ServerChoice server = serverChoice.get();
  if (!server.Decision) {
    log::error(server.Error);
    return 1;
  }
  o.UseCompileServer = server.Decision->Use;
  o.CompileServerReason = server.Decision->Reason;
  log::info(std::string(o.UseCompileServer ? "compile server: on (" : "compile server: off (") + o.CompileServerReason +
            ")");

  HarvestRunRequest run{std::move(o), std::move(batch), {}, strict};
  run.Exploration.Trajectories = explore;
  run.Exploration.Fork = exploreFork;
  return runHarvestLogs(std::move(run), exploreOrder);
}
