// An MLGO policy directory (`model.tflite` + `output_spec.json`) bound to a
// compiler's features the way LLVM's development mode binds it: model inputs
// `action_<feature>:0` by name (inputs the compiler does not send are fed
// zeros, features the model lacks are ignored, byte sizes checked), outputs
// by the output spec, entry 0 the decision, later entries extra outputs
// logged under their logging names.
#pragma once

#include "mlgo/log/Problem.h"
#include "mlgo/log/TensorSpec.h"
#include "mlgo/model/TFLiteModel.h"

#include <memory>
#include <optional>

namespace mlgo::model {

struct PolicyOutput {
  std::string LoggingName;
  TensorSpec Spec; // as output_spec.json gives it (tensor name, port, type, shape)
  size_t Tensor = 0;
  /// The spec as a log declares it: named by its logging name.
  TensorSpec logged() const;
};

/// How one compiler feature list maps onto the model's inputs.
struct PolicyBinding {
  struct Input {
    size_t Tensor;
    std::optional<size_t> Feature; // nullopt: fed zeros
  };
  std::vector<Input> Inputs;       // one per model input
  std::vector<std::string> Unused; // compiler features the model does not read
};

class PolicyModel {
public:
  /// Loads DIR/model.tflite and DIR/output_spec.json (the output spec is
  /// checked against the model's outputs here).
  static llvm::Expected<std::unique_ptr<PolicyModel>> load(llvm::StringRef dir);
  /// load(), then what both hosts (the harvester's interactive channel and
  /// the compiler plugin) require of a policy deciding `problem`: output
  /// spec entry 0 is that problem's decision, with one element.
  static llvm::Expected<std::unique_ptr<PolicyModel>> loadFor(llvm::StringRef dir, Problem problem);

  const TFLiteModel &model() const { return *Model; }
  const std::string &directory() const { return Dir; }
  /// output_spec.json's entries; [0] is the decision.
  const std::vector<PolicyOutput> &outputs() const { return Outputs; }

  /// Binds `features` (the compiler's, in its order) to the model's inputs.
  llvm::Expected<PolicyBinding> bind(llvm::ArrayRef<TensorSpec> features) const;
  /// Feeds `features` (bytes in the bound order), runs the model.
  llvm::Error evaluate(const PolicyBinding &binding, llvm::ArrayRef<llvm::StringRef> features);
  /// Output `i`'s bytes after evaluate() (of its spec's type and size).
  llvm::StringRef output(size_t i) const;
  /// Output 0's first element as an integer (float outputs are truncated).
  int64_t decision() const;

private:
  std::string Dir;
  std::unique_ptr<TFLiteModel> Model;
  std::vector<PolicyOutput> Outputs;
};

/// The input name LLVM looks for: "action_<feature>:0".
std::string modelInputName(llvm::StringRef feature);

} // namespace mlgo::model
