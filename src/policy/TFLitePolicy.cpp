#include "mlgo/policy/Policy.h"

#include "mlgo/model/PolicyModel.h"

namespace mlgo {
namespace {

// Evaluates the policy directory in process: one model (and arena) per
// worker, bound again whenever a stream's header changes.
class TFLitePolicy : public Policy {
public:
  TFLitePolicy(std::unique_ptr<model::PolicyModel> model, Problem problem)
      : Model(std::move(model)), Decisions(problem) {
    for (size_t i = 1; i < Model->outputs().size(); ++i)
      Extras.push_back(Model->outputs()[i].logged());
  }

  llvm::Error beginStream(const LogHeader &header, Deadline) override {
    std::string line = header.toLine();
    if (line == BoundHeader)
      return llvm::Error::success();
    auto binding = Model->bind(header.Features);
    if (!binding)
      return binding.takeError();
    Binding = std::move(*binding);
    BoundHeader = line;
    Pieces.resize(header.Features.size());
    return llvm::Error::success();
  }

  llvm::Expected<std::string> decide(const Query &query, Deadline) override {
    for (size_t i = 0; i < Pieces.size(); ++i)
      Pieces[i] = query.Observation.feature(i);
    if (llvm::Error e = Model->evaluate(Binding, Pieces))
      return e;
    ExtraBytes.clear();
    for (size_t i = 1; i < Model->outputs().size(); ++i)
      ExtraBytes += Model->output(i).str();
    std::string reply(query.Advice.byteSize(), '\0');
    if (Decisions == Problem::RegallocPriority) {
      float priority = static_cast<float>(Model->outputs()[0].Spec.elementAsDouble(Model->output(0), 0));
      if (query.Advice.Type == ElementType::Float && reply.size() == sizeof(priority))
        std::memcpy(reply.data(), &priority, sizeof(priority));
      return reply;
    }
    int64_t decision = Model->decision();
    if (Decisions == Problem::Inliner)
      decision = decision != 0; // LLVM: evaluate<int64_t>() != 0
    if (reply.size() == sizeof(decision))
      std::memcpy(reply.data(), &decision, sizeof(decision));
    return reply;
  }

  std::vector<TensorSpec> loggedOutputs() const override { return Extras; }
  llvm::StringRef loggedOutputBytes() const override { return ExtraBytes; }

private:
  std::unique_ptr<model::PolicyModel> Model;
  Problem Decisions;
  model::PolicyBinding Binding;
  std::string BoundHeader, ExtraBytes;
  std::vector<llvm::StringRef> Pieces;
  std::vector<TensorSpec> Extras;
};

} // namespace

llvm::Expected<std::unique_ptr<Policy>> makeTFLitePolicy(const std::string &dir, Problem problem) {
  auto model = model::PolicyModel::loadFor(dir, problem);
  if (!model)
    return model.takeError();
  return std::make_unique<TFLitePolicy>(std::move(*model), problem);
}

} // namespace mlgo
