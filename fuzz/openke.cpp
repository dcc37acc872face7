// OpenKE's numeric files as mlgo-ir2vec train reads them (readTripletData),
// the vocabulary layout it derives from the entity names (vocabularyLayout),
// a short training and the vocabulary JSON it writes (vocabularyJson).
// The input holds the three files, entity2id.txt, relation2id.txt and
// train2id.txt, separated by lines "%%".
// Contract: a clear error naming the file, or triplets whose ids are within
// the counts; a layout with a known section for every entity, or an error
// naming the file; and what train writes is a vocabulary its mode's reader
// (checkIR2VecVocabulary, MachineVocabularies::load) accepts. Never a crash
// or an exception.
#include "FuzzSupport.h"

#include "mlgo/embed/MachineVocabulary.h"
#include "mlgo/embed/TransE.h"
#include "mlgo/embed/VocabularyJson.h"
#include "mlgo/harvest/IR2VecVocabulary.h"

#include "llvm/ADT/StringRef.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  llvm::StringRef files[3];
  for (int i = 0; i < 3; ++i) {
    auto [file, rest] = input.split("\n%%\n");
    files[i] = file;
    input = rest;
  }
  const std::string &dir = mlgo::fuzz::scratchDir();
  const char *names[] = {"entity2id.txt", "relation2id.txt", "train2id.txt"};
  for (int i = 0; i < 3; ++i)
    mlgo::fuzz::writeScratch(names[i], reinterpret_cast<const uint8_t *>(files[i].data()), files[i].size());

  auto triplets = mlgo::readTripletData(dir);
  if (!triplets) {
    FUZZ_ERROR_MESSAGE(triplets.takeError(), dir);
    return 0;
  }
  FUZZ_CHECK(!triplets->Triplets.empty(), "accepted without a triplet");
  for (const mlgo::Triplet &t : triplets->Triplets)
    FUZZ_CHECK(t.Head < triplets->Entities.size() && t.Tail < triplets->Entities.size() &&
                   t.Relation < triplets->Relations.size(),
               "a triplet id beyond the counts");

  auto layout = mlgo::vocabularyLayout(*triplets, dir);
  if (!layout) {
    FUZZ_ERROR_MESSAGE(layout.takeError(), dir);
    return 0;
  }
  FUZZ_CHECK(layout->Entries.size() == triplets->Entities.size(), "a layout entry count other than the entities'");
  for (const auto &entry : layout->Entries)
    FUZZ_CHECK(entry.Section < layout->Sections.size(), "an entity in no section");

  // Training costs (entities + relations) x dim per thread: keep it small.
  if (triplets->Entities.size() + triplets->Relations.size() > 4096 || triplets->Triplets.size() > 256)
    return 0;
  mlgo::TransEOptions options;
  options.Dimension = 3;
  options.Epochs = 2;
  options.Threads = 1;
  mlgo::TransEModel model = mlgo::trainTransE(*triplets, options);
  std::string json = mlgo::vocabularyJson(*layout, model);
  std::string written =
      mlgo::fuzz::writeScratch("vocab.json", reinterpret_cast<const uint8_t *>(json.data()), json.size());
  if (layout->Mode == mlgo::EmbeddingMode::MIR) {
    auto read = mlgo::MachineVocabularies::load(written);
    FUZZ_CHECK(!!read, "train wrote a MIR2Vec vocabulary its reader refuses: " +
                           (read ? std::string() : llvm::toString(read.takeError())));
  } else {
    auto read = mlgo::checkIR2VecVocabulary(written);
    FUZZ_CHECK(!!read, "train wrote an IR2Vec vocabulary its reader refuses: " +
                           (read ? std::string() : llvm::toString(read.takeError())));
  }
  return 0;
}
