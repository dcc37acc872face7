// model.tflite as `--policy=tflite:DIR` and mlgo-policy read it: our own
// bounds-checked FlatBuffers reader and the evaluator behind it.
// Contract: any bytes give a model or an error naming the file, never a
// crash, a read outside the buffer or an unbounded allocation; a model that
// loads runs on any input bytes (success or a clear error), and running it
// twice on the same inputs gives the same outputs (no state leaks between
// decisions, no uninitialized reads).
#include "FuzzSupport.h"

#include "mlgo/model/TFLiteModel.h"

#include <algorithm>
#include <cstring>
#include <vector>

using mlgo::model::TFLiteModel;

namespace {

std::vector<std::vector<char>> outputs(TFLiteModel &model) {
  std::vector<std::vector<char>> result;
  for (const mlgo::model::GraphPort &port : model.outputs()) {
    llvm::ArrayRef<char> bytes = model.data(port.Tensor);
    result.emplace_back(bytes.begin(), bytes.end());
  }
  return result;
}

// Fills every input with `fill` repeated (zeros if empty); a copy per
// repetition, so that large input tensors cost little.
void feed(TFLiteModel &model, llvm::StringRef fill) {
  for (const mlgo::model::GraphPort &port : model.inputs()) {
    llvm::MutableArrayRef<char> bytes = model.data(port.Tensor);
    if (fill.empty()) {
      std::memset(bytes.data(), 0, bytes.size());
      continue;
    }
    for (size_t at = 0; at < bytes.size(); at += fill.size())
      std::memcpy(bytes.data() + at, fill.data(), std::min(fill.size(), bytes.size() - at));
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto model = TFLiteModel::parse(bytes, "fuzz/model.tflite");
  if (!model) {
    std::string message = llvm::toString(model.takeError());
    FUZZ_CHECK(message.find("fuzz/model.tflite") != std::string::npos,
               "an error that does not name the file: " + message);
    return 0;
  }
  // Inputs: zeros (what LLVM feeds a model input the compiler lacks), then
  // the file's own last bytes as arbitrary feature values.
  for (llvm::StringRef fill : {llvm::StringRef(), bytes.take_back(64)}) {
    feed(**model, fill);
    llvm::Error first = (*model)->invoke();
    bool ok = !first;
    std::string firstMessage = ok ? "" : llvm::toString(std::move(first));
    std::vector<std::vector<char>> once = ok ? outputs(**model) : std::vector<std::vector<char>>{};
    feed(**model, fill);
    llvm::Error second = (*model)->invoke();
    FUZZ_CHECK(ok == !second, "the same inputs succeed once and fail once");
    if (second)
      FUZZ_CHECK(llvm::toString(std::move(second)) == firstMessage, "the same inputs fail differently");
    else
      FUZZ_CHECK(outputs(**model) == once, "the same inputs give different outputs");
  }
  return 0;
}
