// An IR2Vec vocabulary as harvest-logs --ir2vec_vocab checks it
// (checkIR2VecVocabulary) before handing it to every compile.
// Contract: any bytes give a clear error naming the file, or an accepted
// vocabulary whose dimension and entries agree with the JSON (the three
// sections present, every vector of that one dimension); never a crash or
// an exception.
#include "FuzzSupport.h"

#include "mlgo/harvest/IR2VecVocabulary.h"

#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::scratchDir() + "/vocab.json";
  mlgo::fuzz::writeScratch("vocab.json", data, size);
  auto vocabulary = mlgo::checkIR2VecVocabulary(path);
  if (!vocabulary) {
    FUZZ_ERROR_MESSAGE(vocabulary.takeError(), "vocab.json");
    return 0;
  }
  FUZZ_CHECK(vocabulary->Dimension >= 1 && vocabulary->Sha256.size() == 64, "an accepted vocabulary without shape");
  nlohmann::json json = nlohmann::json::parse(std::string(reinterpret_cast<const char *>(data), size));
  size_t entries = 0;
  for (const char *section : {"Opcodes", "Types", "Arguments"})
    FUZZ_CHECK(json.contains(section), std::string("accepted without ") + section);
  for (const auto &[section, members] : json.items())
    for (const auto &[entity, vector] : members.items()) {
      FUZZ_CHECK(vector.size() == vocabulary->Dimension, "a vector of another dimension accepted");
      ++entries;
    }
  FUZZ_CHECK(entries == vocabulary->Entries, "the entry count disagrees with the JSON");
  return 0;
}
