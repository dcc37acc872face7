// A MIR2Vec vocabulary as mlgo-ir2vec embed --mode=mir reads it
// (MachineVocabularies::load, over LLVM's own section parser) and as every
// mlgo-ir2vec command tells a vocabulary's mode (vocabularyMode).
// Contract: any bytes give a clear error naming the file, or an accepted
// vocabulary of one width >= 1 whose four sections are in the JSON, every
// row of that width; an accepted file is told a MIR2Vec one. Never a crash
// or an exception.
#include "FuzzSupport.h"

#include "mlgo/embed/MachineVocabulary.h"
#include "mlgo/embed/VocabularyMode.h"

#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("mir2vec.json", data, size);
  auto mode = mlgo::vocabularyMode(path);
  if (!mode)
    FUZZ_ERROR_MESSAGE(mode.takeError(), path);
  auto vocabulary = mlgo::MachineVocabularies::load(path);
  if (!vocabulary) {
    FUZZ_ERROR_MESSAGE(vocabulary.takeError(), path);
    return 0;
  }
  FUZZ_CHECK(mode && *mode == mlgo::EmbeddingMode::MIR, "an accepted MIR2Vec vocabulary not told a MIR2Vec one");
  unsigned dimension = (*vocabulary)->dimension();
  FUZZ_CHECK(dimension >= 1, "an accepted vocabulary of width 0");
  // LLVM's JSON parser accepted the file; nlohmann's reads it independently.
  nlohmann::json json = nlohmann::json::parse(std::string(reinterpret_cast<const char *>(data), size), nullptr,
                                              /*allow_exceptions=*/false);
  if (json.is_discarded())
    return 0; // the two parsers differ at the edges (e.g. duplicate keys, lone surrogates)
  for (const char *section : {"Opcodes", "CommonOperands", "PhysicalRegisters", "VirtualRegisters"}) {
    FUZZ_CHECK(json.contains(section) && json[section].is_object(), std::string("accepted without ") + section);
    for (const auto &[entity, vector] : json[section].items())
      FUZZ_CHECK(vector.is_array() && vector.size() == dimension,
                 std::string("a row of another width accepted in ") + section + ": " + entity);
  }
  return 0;
}
