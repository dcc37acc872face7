// training-log: read, check and convert MLGO training logs.
#include "mlgo/log/DatasetFile.h"
#include "mlgo/log/LogDataset.h"
#include "mlgo/log/TFRecord.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/log/Vocab.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/DirectoryWalk.h"
#include "mlgo/support/PathUtil.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sys/stat.h>

using namespace mlgo;

namespace {

void fail(const std::string &message) { std::fprintf(stderr, "training-log: error: %s\n", message.c_str()); }

// Log files named directly, or every *.log below a named directory (sorted).
llvm::Expected<std::vector<std::string>> expandInputs(const std::vector<std::string> &paths) {
  std::vector<std::string> files;
  for (const std::string &path : paths) {
    struct stat st;
    if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      if (llvm::Error e = walkMatching(path, {".log"}, [&](const WalkEntry &entry) {
            if (!entry.IsDirectory)
              files.push_back(joinPath(path, entry.Relative));
          }))
        return e;
    } else {
      files.push_back(path);
    }
  }
  return files;
}

void writeOut(const std::string &text) { std::fwrite(text.data(), 1, text.size(), stdout); }

nlohmann::ordered_json tensorJson(const TensorSpec &spec, llvm::StringRef bytes) {
  auto element = [&](size_t i) -> nlohmann::ordered_json {
    if (isFloatingPoint(spec.Type))
      return spec.elementAsDouble(bytes, i);
    if (spec.Type == ElementType::UInt64)
      return static_cast<uint64_t>(spec.elementAsInt(bytes, i));
    return spec.elementAsInt(bytes, i);
  };
  if (spec.elementCount() == 1)
    return element(0);
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  for (size_t i = 0; i < spec.elementCount(); ++i)
    values.push_back(element(i));
  return values;
}

std::string csvValue(const TensorSpec &spec, llvm::StringRef bytes, size_t i) {
  if (!isFloatingPoint(spec.Type))
    return std::to_string(spec.elementAsInt(bytes, i));
  return pythonFloatRepr(spec.elementAsDouble(bytes, i));
}

std::string csvQuote(const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

int dump(const std::string &path, const std::string &format) {
  auto reader = TrainingLogReader::open(path);
  if (!reader) {
    fail(llvm::toString(reader.takeError()));
    return 1;
  }
  std::optional<nlohmann::ordered_json> pending; // an observation waiting for its outcome
  std::string pendingCsv;
  auto flush = [&] {
    if (pending)
      writeOut(pending->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!pendingCsv.empty())
      writeOut(pendingCsv + (format == "csv" && (*reader)->header().Score ? "," : "") + "\n");
    pending.reset();
    pendingCsv.clear();
  };
  while (true) {
    auto event = (*reader)->next();
    if (!event) {
      flush();
      fail(llvm::toString(event.takeError()));
      return 1;
    }
    const LogHeader &header = (*reader)->header();
    switch (*event) {
    case TrainingLogReader::Event::End:
      flush();
      return 0;
    case TrainingLogReader::Event::Header:
      flush();
      if (format == "csv") {
        std::string row = "context,observation";
        for (const TensorSpec &spec : header.Features)
          for (size_t i = 0, n = spec.elementCount(); i < n; ++i)
            row += "," + csvQuote(n == 1 ? spec.Name : spec.Name + "[" + std::to_string(i) + "]");
        if (header.Score)
          row += "," + csvQuote(header.Score->Name);
        writeOut(row + "\n");
      }
      break;
    case TrainingLogReader::Event::Context:
      flush();
      break;
    case TrainingLogReader::Event::Observation:
      flush();
      if (format == "csv") {
        pendingCsv = csvQuote((*reader)->context()) + "," + std::to_string((*reader)->observationIndex());
        for (size_t f = 0; f < header.Features.size(); ++f)
          for (size_t i = 0; i < header.Features[f].elementCount(); ++i)
            pendingCsv += "," + csvValue(header.Features[f], (*reader)->feature(f), i);
      } else {
        nlohmann::ordered_json row;
        row["context"] = (*reader)->context();
        row["observation"] = (*reader)->observationIndex();
        for (size_t f = 0; f < header.Features.size(); ++f)
          row[header.Features[f].Name] = tensorJson(header.Features[f], (*reader)->feature(f));
        pending = std::move(row);
      }
      break;
    case TrainingLogReader::Event::Outcome:
      if (pending)
        (*pending)["outcome"] = tensorJson(*header.Score, (*reader)->outcome());
      if (!pendingCsv.empty()) {
        writeOut(pendingCsv + "," + csvValue(*header.Score, (*reader)->outcome(), 0) + "\n");
        pendingCsv.clear();
      }
      flush();
      break;
    }
  }
}

struct FeatureStats {
  double Min = std::numeric_limits<double>::infinity(), Max = -std::numeric_limits<double>::infinity(), Sum = 0;
  uint64_t Count = 0;
};

int stats(const std::vector<std::string> &files, bool json) {
  size_t contexts = 0, observations = 0, outcomes = 0, streams = 0;
  std::set<std::string> contextNames;
  std::vector<std::string> order;
  std::map<std::string, FeatureStats> features;
  std::string decisionName;
  std::map<int64_t, uint64_t> decisions;
  int status = 0;
  nlohmann::ordered_json errors = nlohmann::ordered_json::array();
  for (const std::string &file : files) {
    auto reader = TrainingLogReader::open(file);
    if (!reader) {
      errors.push_back(llvm::toString(reader.takeError()));
      status = 1;
      continue;
    }
    std::optional<size_t> decision;
    while (true) {
      auto event = (*reader)->next();
      if (!event) {
        errors.push_back(llvm::toString(event.takeError()));
        status = 1;
        break;
      }
      if (*event == TrainingLogReader::Event::End)
        break;
      const LogHeader &header = (*reader)->header();
      if (*event == TrainingLogReader::Event::Header) {
        ++streams;
        for (const char *name : {"inlining_decision", "index_to_evict", "priority"})
          if ((decision = header.find(name))) {
            decisionName = name;
            break;
          }
        for (const TensorSpec &spec : header.Features)
          if (!features.count(spec.Name))
            order.push_back(spec.Name), features[spec.Name];
      } else if (*event == TrainingLogReader::Event::Context) {
        ++contexts;
        contextNames.insert(file + "\n" + (*reader)->context());
      } else if (*event == TrainingLogReader::Event::Observation) {
        ++observations;
        for (size_t f = 0; f < header.Features.size(); ++f) {
          const TensorSpec &spec = header.Features[f];
          FeatureStats &s = features[spec.Name];
          llvm::StringRef bytes = (*reader)->feature(f);
          for (size_t i = 0, n = spec.elementCount(); i < n; ++i) {
            double v = spec.elementAsDouble(bytes, i);
            s.Min = std::min(s.Min, v);
            s.Max = std::max(s.Max, v);
            s.Sum += v;
            ++s.Count;
          }
        }
        if (decision && !isFloatingPoint(header.Features[*decision].Type))
          ++decisions[header.Features[*decision].elementAsInt((*reader)->feature(*decision), 0)];
      } else {
        ++outcomes;
      }
    }
  }
  nlohmann::ordered_json out;
  out["files"] = files.size();
  out["streams"] = streams;
  out["context_records"] = contexts;
  out["contexts"] = contextNames.size();
  out["observations"] = observations;
  out["outcomes"] = outcomes;
  nlohmann::ordered_json perFeature = nlohmann::ordered_json::object();
  for (const std::string &name : order) {
    const FeatureStats &s = features[name];
    perFeature[name] =
        s.Count ? nlohmann::ordered_json{{"min", s.Min}, {"max", s.Max}, {"mean", s.Sum / s.Count}, {"values", s.Count}}
                : nlohmann::ordered_json{{"values", 0}};
  }
  out["features"] = perFeature;
  nlohmann::ordered_json histogram = nlohmann::ordered_json::object();
  for (const auto &[value, count] : decisions)
    histogram[std::to_string(value)] = count;
  out["decision"] = {{"name", decisionName}, {"histogram", histogram}};
  out["errors"] = errors;
  if (json) {
    writeOut(out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return status;
  }
  std::string text = "files: " + std::to_string(files.size()) + ", streams: " + std::to_string(streams) +
                     ", contexts: " + std::to_string(contextNames.size()) +
                     ", observations: " + std::to_string(observations) + ", outcomes: " + std::to_string(outcomes) +
                     "\n";
  char line[256];
  std::snprintf(line, sizeof(line), "%-40s %14s %14s %14s\n", "feature", "min", "max", "mean");
  text += line;
  for (const std::string &name : order) {
    const FeatureStats &s = features[name];
    if (s.Count)
      std::snprintf(line, sizeof(line), "%-40s %14.6g %14.6g %14.6g\n", name.c_str(), s.Min, s.Max, s.Sum / s.Count);
    else
      std::snprintf(line, sizeof(line), "%-40s %14s %14s %14s\n", name.c_str(), "-", "-", "-");
    text += line;
  }
  if (!decisionName.empty()) {
    text += "decision " + decisionName + ":";
    for (const auto &[value, count] : decisions)
      text += " " + std::to_string(value) + "=" + std::to_string(count);
    text += "\n";
  }
  writeOut(text);
  for (const auto &e : errors)
    fail(e.get<std::string>());
  return status;
}

int validate(const std::vector<std::string> &files) {
  int status = 0;
  for (const std::string &file : files) {
    auto reader = TrainingLogReader::open(file);
    if (!reader) {
      fail(llvm::toString(reader.takeError()));
      status = 1;
      continue;
    }
    size_t observations = 0, contexts = 0;
    while (true) {
      auto event = (*reader)->next();
      if (!event) {
        fail(llvm::toString(event.takeError()));
        status = 1;
        break;
      }
      if (*event == TrainingLogReader::Event::End) {
        writeOut("ok: " + file + ": " + std::to_string((*reader)->streams()) + " stream(s), " +
                 std::to_string(contexts) + " context record(s), " + std::to_string(observations) +
                 " observation(s), " + std::to_string((*reader)->offset()) + " bytes\n");
        break;
      }
      observations += *event == TrainingLogReader::Event::Observation;
      contexts += *event == TrainingLogReader::Event::Context;
    }
  }
  return status;
}

llvm::Expected<RewardPolicy> parseReward(const std::string &text) {
  RewardPolicy policy;
  llvm::StringRef t = text;
  if (t == "zero")
    return policy;
  if (t == "score") {
    policy.How = RewardPolicy::Mode::Score;
    return policy;
  }
  if (t.consume_front("constant:")) {
    double value;
    if (!t.getAsDouble(value)) {
      policy.How = RewardPolicy::Mode::Constant;
      policy.Value = static_cast<float>(value);
      return policy;
    }
  }
  return llvm::createStringError("--reward must be zero, score or constant:X, not '%s'", text.c_str());
}

int toTFRecord(const std::vector<std::string> &files, const std::string &output, const std::string &rewardText,
               const std::string &keysFile) {
  auto reward = parseReward(rewardText);
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
  CLI::App *validateCmd = app.add_subcommand("validate", "Exit 0 only if every log parses completely.");
  validateCmd->add_option("LOG", validateLogs, "Log files, or directories of *.log files.")->required();

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

  if (std::optional<int> exit = parseCommandLine(app, argc, argv))
    return *exit;

  if (*dumpCmd)
    return dump(dumpLog, format);
  std::vector<std::string> *inputs = *statsCmd      ? &statLogs
                                     : *validateCmd ? &validateLogs
                                     : *recordCmd   ? &recordLogs
                                                    : &vocabLogs;
  auto files = expandInputs(*inputs);
  if (!files) {
    fail(llvm::toString(files.takeError()));
    return 1;
  }
  if (*statsCmd)
    return stats(*files, statsJson);
  if (*validateCmd)
    return validate(*files);
  if (*recordCmd)
    return toTFRecord(*files, output, reward, keysFile);
  return vocab(*files, vocabDir, buckets);
}
