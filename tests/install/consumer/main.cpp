// Reads a corpus description, a training log and an object's size with
// mlgo's API and prints what it found, one "key value" per line:
//   mlgo_consumer CORPUS_DIR TRAINING_LOG OBJECT
// It includes a header of every room of the library, so that each installs
// whole and compiles in a project of its own.
#include <mlgo/compile/CompilerDriver.h>
#include <mlgo/corpus/CorpusDescription.h>
#include <mlgo/deploy/DecisionExport.h>
#include <mlgo/evaluate/NativeSize.h>
#include <mlgo/explore/Exploration.h>
#include <mlgo/harvest/Harvester.h>
#include <mlgo/log/TrainingLog.h>
#include <mlgo/policy/Policy.h>
#include <mlgo/run/HarvestRun.h>
#include <mlgo/support/Version.h>

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: mlgo_consumer CORPUS_DIR TRAINING_LOG OBJECT\n");
    return 2;
  }
  llvm::Expected<mlgo::CorpusDescription> corpus = mlgo::readCorpusDescription(argv[1]);
  if (!corpus) {
    std::fprintf(stderr, "mlgo_consumer: %s\n", llvm::toString(corpus.takeError()).c_str());
    return 1;
  }
  std::printf("version %s\n", mlgo::versionString().c_str());
  std::printf("modules %zu\n", corpus->Modules.size());

  size_t observations = 0, features = 0;
  llvm::Error walked = mlgo::visitLog(
      argv[2], [&](mlgo::TrainingLogReader &reader, mlgo::TrainingLogReader::Event event) -> llvm::Error {
        if (event == mlgo::TrainingLogReader::Event::Header)
          features = reader.header().Features.size();
        if (event == mlgo::TrainingLogReader::Event::Observation)
          ++observations;
        return llvm::Error::success();
      });
  if (walked) {
    std::fprintf(stderr, "mlgo_consumer: %s\n", llvm::toString(std::move(walked)).c_str());
    return 1;
  }
  std::printf("features %zu\n", features);
  std::printf("observations %zu\n", observations);

  llvm::Expected<uint64_t> text = mlgo::berkeleyTextSize(argv[3]);
  if (!text) {
    std::fprintf(stderr, "mlgo_consumer: %s\n", llvm::toString(text.takeError()).c_str());
    return 1;
  }
  std::printf("text %llu\n", static_cast<unsigned long long>(*text));
  return 0;
}
