// llc's optimization remarks (-pass-remarks-output YAML, filtered to
// regalloc) as harvest-logs reads them for register-allocation rewards,
// regallocScores. llc writes them from someone else's module: function
// names and the remarks' values come from the corpus.
// Contract: any bytes give per-function scores or a clear error naming the
// file, never a crash or an exception; every score is a finite number (it
// becomes a reward in the training log), and only functions named by a
// SpillReloadCopies remark have one.
#include "FuzzSupport.h"

#include "mlgo/evaluate/RegallocReward.h"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("m.remarks.yaml", data, size);
  auto scores = mlgo::regallocScores(path);
  if (!scores) {
    FUZZ_ERROR_MESSAGE(scores.takeError(), path);
    return 0;
  }
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  if (!scores->empty())
    FUZZ_CHECK(input.contains("SpillReloadCopies"), "scores without a SpillReloadCopies remark");
  for (const auto &[function, score] : *scores) {
    FUZZ_CHECK(!function.empty(), "a score for a function without a name");
    FUZZ_CHECK(std::isfinite(score), "function " + function + ": score " + std::to_string(score) + " is not finite");
  }
  return 0;
}
