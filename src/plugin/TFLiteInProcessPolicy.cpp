// `tflite:DIR` inside the compiler: ml-compiler-opt's policy directory
// (model.tflite + output_spec.json) evaluated by our native TFLite evaluator
// (src/model/) on the features LLVM's MLInlineAdvisor computed, bound and
// decided exactly as on the interactive channel (src/policy/TFLitePolicy.cpp):
// inputs by name, absent ones fed zeros, output 0 the decision (non-zero:
// inline), later outputs logged under their logging names.
//
// Beside the compiler's features a model may read two inputs about the
// default heuristic: `inlining_default` (its decision, 0 or 1, as
// development mode and the interactive channel send it) and `cost_margin`
// (its threshold minus its inline cost: how sure it was). A policy that
// deviates from -Oz only where that pays (models/inliner-oz-deviate) reads
// both. A cost that is not variable has no margin; the model then sees
// +2^31 when the heuristic inlines and -2^31 when it does not, beyond any
// variable margin, so "always" and "never" are the surest of all
// (mlgo_corpus.deviate encodes the sites file's null alike).
#include "mlgo/model/PolicyModel.h"
#include "mlgo/policy/InProcessPolicy.h"

#include <algorithm>
#include <cstring>

namespace mlgo {
namespace {

class TFLiteDecisions : public InProcessPolicy {
public:
  explicit TFLiteDecisions(std::unique_ptr<model::PolicyModel> model) : Model(std::move(model)) {
    for (size_t i = 1; i < Model->outputs().size(); ++i)
      Extras.push_back(Model->outputs()[i].logged());
  }

  // The compiler's features are fixed for its lifetime; bind once. Like
  // development mode (and the interactive channel, whose last feature it
  // is), the model also sees `inlining_default`, the heuristic's decision,
  // and after it `cost_margin`.
  llvm::Error beginModule(llvm::StringRef, llvm::ArrayRef<TensorSpec> features) override {
    std::vector<TensorSpec> withDefault(features.begin(), features.end());
    withDefault.push_back(TensorSpec{"inlining_default", ElementType::Int64, {1}, 0});
    withDefault.push_back(TensorSpec{"cost_margin", ElementType::Int64, {1}, 0});
    auto binding = Model->bind(withDefault);
    if (!binding)
      return binding.takeError();
    Binding = std::move(*binding);
    return llvm::Error::success();
  }

  std::vector<TensorSpec> extraOutputs() const override { return Extras; }

  // ml-compiler-opt's models (and inliner-oz) read neither; then the
  // plugin skips the heuristic's cost analysis.
  bool usesDefaultDecision() const override { return reads("inlining_default") || reads("cost_margin"); }

  llvm::Expected<bool> decide(const InProcessQuery &query, llvm::MutableArrayRef<std::string> extra) override {
    Pieces.assign(query.Features.begin(), query.Features.end());
    DefaultBytes = query.DefaultDecision;
    Pieces.push_back(llvm::StringRef(reinterpret_cast<const char *>(&DefaultBytes), sizeof(DefaultBytes)));
    MarginBytes = costMarginInput(query.CostMargin, query.DefaultDecision);
    Pieces.push_back(llvm::StringRef(reinterpret_cast<const char *>(&MarginBytes), sizeof(MarginBytes)));
    if (llvm::Error e = Model->evaluate(Binding, Pieces))
      return e;
    for (size_t i = 0; i < extra.size(); ++i) {
      llvm::StringRef bytes = Model->output(i + 1);
      extra[i].assign(bytes.data(), bytes.size());
    }
    return Model->decision() != 0; // as LLVM's MLInlineAdvisor reads its model
  }

private:
  bool reads(llvm::StringRef input) const {
    return std::find(Binding.Unused.begin(), Binding.Unused.end(), input) == Binding.Unused.end();
  }

  static int64_t costMarginInput(std::optional<int64_t> margin, bool defaultDecision) {
    constexpr int64_t Surest = int64_t(1) << 31;
    return margin ? *margin : (defaultDecision ? Surest : -Surest);
  }

  std::unique_ptr<model::PolicyModel> Model;
  model::PolicyBinding Binding;
  std::vector<TensorSpec> Extras;
  std::vector<llvm::StringRef> Pieces;
  int64_t DefaultBytes = 0, MarginBytes = 0;
};

InProcessPolicyRegistration
    TFLite("tflite",
           "tflite:DIR: decides with the TFLite policy in DIR (model.tflite + output_spec.json), evaluated natively",
           [](llvm::StringRef dir) -> llvm::Expected<std::unique_ptr<InProcessPolicy>> {
             if (dir.empty())
               return llvm::createStringError("tflite:DIR needs the policy directory");
             // Once per compiler process, checked as the interactive host checks it.
             auto model = model::PolicyModel::loadFor(dir, Problem::Inliner);
             if (!model)
               return model.takeError();
             return std::make_unique<TFLiteDecisions>(std::move(*model));
           });

} // namespace
} // namespace mlgo
