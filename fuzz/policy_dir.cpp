// A policy directory as --policy=tflite:DIR, the compiler plugin and
// mlgo-policy read it: model.tflite with output_spec.json
// (PolicyModel::loadFor, PolicyModel::load), bound to the inliner's
// features and evaluated. The input holds the two files, the model first,
// separated by a line "--output_spec--".
// Contract: a policy or an error naming a file of the directory; a loaded
// policy has a one-element decision as its first output, binds the
// features (or says which one does not fit), and evaluating it gives each
// output the byte size its spec declares. Never a crash, an exception or a
// read outside the buffers.
#include "FuzzSupport.h"

#include "mlgo/model/PolicyModel.h"

#include "llvm/ADT/StringRef.h"

#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [model, spec] = input.split("\n--output_spec--\n");
  const std::string &dir = mlgo::fuzz::scratchDir();
  mlgo::fuzz::writeScratch("model.tflite", reinterpret_cast<const uint8_t *>(model.data()), model.size());
  mlgo::fuzz::writeScratch("output_spec.json", reinterpret_cast<const uint8_t *>(spec.data()), spec.size());

  auto policy = mlgo::model::PolicyModel::loadFor(dir, mlgo::Problem::Inliner);
  if (!policy) {
    FUZZ_ERROR_MESSAGE(policy.takeError(), dir);
    return 0;
  }
  FUZZ_CHECK(!(*policy)->outputs().empty() && (*policy)->outputs()[0].Spec.elementCount() == 1,
             "a policy without a one-element decision");
  // Some of the inliner's features, as the compiler declares them.
  std::vector<mlgo::TensorSpec> features;
  for (const char *name : {"callee_basic_block_count", "callsite_height", "cost_estimate", "caller_users",
                           "callee_users", "inlining_default"})
    features.push_back(mlgo::TensorSpec{name, mlgo::ElementType::Int64, {1}, 0});
  auto binding = (*policy)->bind(features);
  if (!binding) {
    FUZZ_ERROR_MESSAGE(binding.takeError(), "model.tflite");
    return 0;
  }
  FUZZ_CHECK(binding->Inputs.size() == (*policy)->model().inputs().size(), "a binding of another input count");
  // Feature values from the input's last bytes (zeros when it is short).
  std::vector<std::string> values(features.size(), std::string(8, '\0'));
  for (size_t f = 0; f < values.size() && 8 * (f + 1) <= size; ++f)
    std::memcpy(values[f].data(), data + size - 8 * (f + 1), 8);
  std::vector<llvm::StringRef> refs(values.begin(), values.end());
  if (llvm::Error e = (*policy)->evaluate(*binding, refs)) {
    FUZZ_ERROR_MESSAGE(std::move(e), "");
    return 0;
  }
  for (size_t i = 0; i < (*policy)->outputs().size(); ++i)
    FUZZ_CHECK((*policy)->output(i).size() == (*policy)->outputs()[i].Spec.byteSize(),
               "an output of another size than its spec");
  (void)(*policy)->decision();
  return 0;
}
