// Writes a large inliner-shaped training log for bench/training_log.sh:
//   mlgo-bench-make-log OUT MEGABYTES
#include "mlgo/log/TrainingLog.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <random>

using namespace mlgo;

int main(int argc, char **argv) {
  if (argc != 3) {
    llvm::errs() << "usage: " << argv[0] << " OUT MEGABYTES\n";
    return 2;
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(argv[1], ec);
  if (ec) {
    llvm::errs() << argv[1] << ": " << ec.message() << "\n";
    return 1;
  }
  LogHeader header;
  for (int i = 0; i < 38; ++i)
    header.Features.push_back({"feature_" + std::to_string(i), ElementType::Int64, {1}, 0});
  header.Features.push_back({"inlining_default", ElementType::Int64, {1}, 0});
  header.Features.push_back({"inlining_decision", ElementType::Int64, {1}, 0});
  TrainingLogWriter writer(out, header);
  uint64_t target = std::strtoull(argv[2], nullptr, 10) << 20;
  std::mt19937_64 rng(1);
  std::vector<std::string> tensors(header.Features.size(), std::string(8, '\0'));
  std::vector<llvm::StringRef> refs(tensors.size());
  for (int module = 0; out.tell() < target; ++module) {
    writer.switchContext(module % 2 ? "" : "m" + std::to_string(module));
    for (int i = 0; i < 1000; ++i) {
      for (size_t f = 0; f < tensors.size(); ++f) {
        int64_t v = static_cast<int64_t>(rng() % 512) - 100; // includes 0x0a bytes
        std::memcpy(tensors[f].data(), &v, 8);
        refs[f] = tensors[f];
      }
      if (llvm::Error e = writer.observation(refs)) {
        llvm::errs() << llvm::toString(std::move(e)) << "\n";
        return 1;
      }
    }
  }
  return 0;
}
