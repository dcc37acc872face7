#include "mlgo/embed/EmbeddingTable.h"

#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/embed/MachineFunctionEmbeddings.h"
#include "mlgo/log/SequenceExample.h"
#include "mlgo/log/TFRecord.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/PathUtil.h"

#include <nlohmann/json.hpp>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_pipeline.h>

#include <cstring>
#include <optional>

namespace mlgo {
namespace {

std::string jsonRecord(const std::string &module, const std::string *function, const std::vector<double> &values) {
  nlohmann::ordered_json record;
  record["module"] = module;
  record["function"] = function ? nlohmann::ordered_json(*function) : nlohmann::ordered_json(nullptr);
  record["embedding"] = values;
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

struct Item {
  size_t Index = 0;
  std::string Module;
  llvm::Expected<ModuleEmbeddings> Result = ModuleEmbeddings{};
};

} // namespace

std::string embeddingExample(llvm::StringRef module, const std::string *function, const std::vector<double> &values) {
  auto bytesFeature = [](llvm::StringRef value) {
    std::string list, feature;
    appendLengthDelimited(list, 1, value);   // BytesList.value
    appendLengthDelimited(feature, 1, list); // Feature.bytes_list
    return feature;
  };
  std::string packed(values.size() * 4, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    float f = static_cast<float>(values[i]);
    std::memcpy(packed.data() + 4 * i, &f, 4);
  }
  std::string floatList, floatFeature;
  if (!values.empty())
    appendLengthDelimited(floatList, 1, packed); // FloatList.value, packed
  appendLengthDelimited(floatFeature, 2, floatList);
  std::string features;
  auto entry = [&](llvm::StringRef key, const std::string &feature) {
    std::string e;
    appendLengthDelimited(e, 1, key);
    appendLengthDelimited(e, 2, feature);
    appendLengthDelimited(features, 1, e); // Features.feature map entry
  };
  entry("module", bytesFeature(module));
  if (function)
    entry("function", bytesFeature(*function));
  entry("embedding", floatFeature);
  std::string example;
  appendLengthDelimited(example, 1, features); // Example.features
  return example;
}

llvm::Expected<EmbedCorpusSummary> embedCorpus(const EmbedCorpusOptions &options) {
  auto corpus = readCheckedCorpusDescription(options.CorpusDir);
  if (!corpus)
    return corpus.takeError();
  // The vocabulary is checked whole before any module is compiled.
  if (llvm::Error e = checkVocabularyMode(options.VocabPath, options.Mode))
    return std::move(e);
  bool machine = options.Mode == EmbeddingMode::MIR;
  std::unique_ptr<EmbeddingVocabulary> vocabulary;
  std::unique_ptr<MachineVocabularies> machineVocabulary;
  if (machine) {
    auto loaded = MachineVocabularies::load(options.VocabPath);
    if (!loaded)
      return loaded.takeError();
    machineVocabulary = std::move(*loaded);
  } else {
    auto loaded = EmbeddingVocabulary::load(options.VocabPath);
    if (!loaded)
      return loaded.takeError();
    vocabulary = std::move(*loaded);
  }
  AtomicFileWriter table, records;
  if (llvm::Error e = table.open(options.OutputPath))
    return std::move(e);
  if (!options.TFRecordPath.empty())
    if (llvm::Error e = records.open(options.TFRecordPath))
      return std::move(e);

  EmbedCorpusSummary summary;
  summary.Dimension = machine ? machineVocabulary->dimension() : vocabulary->dimension();
  unsigned workers = options.Workers ? options.Workers : static_cast<unsigned>(tbb::info::default_concurrency());
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, workers);
  std::optional<llvm::Error> writeError;
  size_t next = 0;
  tbb::parallel_pipeline(
      2 * workers, tbb::make_filter<void, std::shared_ptr<Item>>(
                       tbb::filter_mode::serial_in_order,
                       [&](tbb::flow_control &control) -> std::shared_ptr<Item> {
                         if (next == corpus->Modules.size() || writeError || interruptRequested()) {
                           control.stop();
                           return nullptr;
                         }
                         auto item = std::make_shared<Item>();
                         item->Index = next;
                         item->Module = corpus->Modules[next++];
                         return item;
                       }) &
                       tbb::make_filter<std::shared_ptr<Item>, std::shared_ptr<Item>>(
                           tbb::filter_mode::parallel,
                           [&](std::shared_ptr<Item> item) {
                             llvm::consumeError(item->Result.takeError());
                             std::string path = joinPath(options.CorpusDir, item->Module + ".bc");
                             item->Result = machine ? embedMachineModule(path, *machineVocabulary, options.Passes)
                                                    : embedModule(path, *vocabulary, options.Kind, options.Passes);
                             return item;
                           }) &
                       tbb::make_filter<std::shared_ptr<Item>, void>(
                           tbb::filter_mode::serial_in_order, [&](std::shared_ptr<Item> item) {
                             if (writeError)
                               return;
                             if (!item->Result) {
                               summary.Failed.emplace_back(item->Module, llvm::toString(item->Result.takeError()));
                               return;
                             }
                             std::string text, examples;
                             for (const FunctionEmbedding &f : item->Result->Functions) {
                               text += jsonRecord(item->Module, &f.Function, f.Values);
                               if (!options.TFRecordPath.empty())
                                 appendTFRecord(examples, embeddingExample(item->Module, &f.Function, f.Values));
                             }
                             text += jsonRecord(item->Module, nullptr, item->Result->Module);
                             if (!options.TFRecordPath.empty())
                               appendTFRecord(examples, embeddingExample(item->Module, nullptr, item->Result->Module));
                             llvm::Error e = table.write(text);
                             if (!e && !examples.empty())
                               e = records.write(examples);
                             if (e) {
                               writeError = std::move(e);
                               return;
                             }
                             ++summary.Modules;
                             summary.Functions += item->Result->Functions.size();
                           }));
  if (writeError)
    return std::move(*writeError);
  if (interruptRequested())
    return llvm::createStringError("interrupted: no output written");
  if (llvm::Error e = table.commit())
    return std::move(e);
  if (!options.TFRecordPath.empty())
    if (llvm::Error e = records.commit())
      return std::move(e);
  return summary;
}

} // namespace mlgo
