#include "mlgo/model/PolicyModel.h"

#include "mlgo/support/JsonFile.h"
#include "mlgo/support/PathUtil.h"

#include <cstring>

namespace mlgo::model {
namespace {

std::optional<DType> dtypeOf(ElementType type) {
  switch (type) {
  case ElementType::Float:
    return DType::Float32;
  case ElementType::Int32:
    return DType::Int32;
  case ElementType::Int64:
    return DType::Int64;
  default:
    return std::nullopt;
  }
}

std::string specText(const TensorSpec &spec) {
  std::string s = std::string(elementTypeName(spec.Type)) + "[";
  for (size_t i = 0; i < spec.Shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(spec.Shape[i]);
  return s + "]";
}

} // namespace

std::string modelInputName(llvm::StringRef feature) { return "action_" + feature.str() + ":0"; }

TensorSpec PolicyOutput::logged() const {
  TensorSpec spec = Spec;
  spec.Name = LoggingName;
  spec.Port = 0;
  return spec;
}

llvm::Expected<std::unique_ptr<PolicyModel>> PolicyModel::load(llvm::StringRef dir) {
  auto policy = std::make_unique<PolicyModel>();
  policy->Dir = dir.str();
  auto model = TFLiteModel::load(joinPath(dir, "model.tflite"));
  if (!model)
    return model.takeError();
  policy->Model = std::move(*model);
  const TFLiteModel &m = *policy->Model;

  std::string specPath = joinPath(dir, "output_spec.json");
  auto json = readJsonFile(specPath);
  if (!json)
    return json.takeError();
  auto bad = [&](const std::string &why) { return llvm::createStringError("%s: %s", specPath.c_str(), why.c_str()); };
  if (!json->is_array() || json->empty())
    return bad("must be a non-empty JSON array of {\"logging_name\", \"tensor_spec\"} entries");
  for (size_t i = 0; i < json->size(); ++i) {
    const nlohmann::json &entry = (*json)[i];
    std::string where = "entry " + std::to_string(i);
    if (!entry.is_object() || !entry.contains("logging_name") || !entry["logging_name"].is_string() ||
        !entry.contains("tensor_spec"))
      return bad(where + " needs a string logging_name and a tensor_spec");
    auto spec = TensorSpec::fromJson(entry["tensor_spec"]);
    if (!spec)
      return bad(where + ": " + llvm::toString(spec.takeError()));
    PolicyOutput out{entry["logging_name"].get<std::string>(), *spec, 0};
    std::string full = spec->Name + ":" + std::to_string(spec->Port);
    std::optional<size_t> found;
    for (const GraphPort &port : m.outputs()) {
      const std::string &tensorName = m.tensors()[port.Tensor].Name;
      if (tensorName == full || (spec->Port == 0 && (tensorName == spec->Name || port.Name == spec->Name))) {
        found = port.Tensor;
        break;
      }
    }
    if (!found) {
      std::string names;
      for (const GraphPort &port : m.outputs())
        names += (names.empty() ? "" : ", ") + m.tensors()[port.Tensor].Name;
      return bad(where + " ('" + out.LoggingName + "') names output '" + full + "', which " + m.path() +
                 " does not have (its outputs: " + names + ")");
    }
    const TensorInfo &t = m.tensors()[*found];
    auto type = dtypeOf(spec->Type);
    if (!type || *type != t.Type || spec->byteSize() != t.byteSize())
      return bad(where + " ('" + out.LoggingName + "') is " + specText(*spec) + ", but the model's output '" + t.Name +
                 "' is " + t.describe());
    out.Tensor = *found;
    policy->Outputs.push_back(std::move(out));
  }
  return policy;
}

llvm::Expected<std::unique_ptr<PolicyModel>> PolicyModel::loadFor(llvm::StringRef dir, Problem problem) {
  auto policy = load(dir);
  if (!policy)
    return policy.takeError();
  std::string specPath = joinPath(dir, "output_spec.json");
  const PolicyOutput &decision = (*policy)->outputs()[0];
  if (decision.LoggingName != decisionName(problem))
    return llvm::createStringError("%s: entry 0 is '%s', but %s policies decide '%s'", specPath.c_str(),
                                   decision.LoggingName.c_str(), problemName(problem), decisionName(problem));
  if (decision.Spec.elementCount() != 1)
    return llvm::createStringError("%s: the decision '%s' must have one element", specPath.c_str(),
                                   decision.LoggingName.c_str());
  return policy;
}

llvm::Expected<PolicyBinding> PolicyModel::bind(llvm::ArrayRef<TensorSpec> features) const {
  PolicyBinding binding;
  std::vector<bool> used(features.size());
  for (const GraphPort &port : Model->inputs()) {
    const TensorInfo &t = Model->tensors()[port.Tensor];
    PolicyBinding::Input input{port.Tensor, std::nullopt};
    for (size_t f = 0; f < features.size(); ++f) {
      std::string name = modelInputName(features[f].Name);
      llvm::StringRef bare = llvm::StringRef(name).drop_back(2); // action_<feature>
      if (t.Name == name || t.Name == bare || port.Name == bare || port.Name == features[f].Name) {
        if (features[f].byteSize() != t.byteSize())
          return llvm::createStringError(
              "%s: model input '%s' is %s (%zu bytes), but the compiler's feature '%s' is %s (%zu bytes)",
              Model->path().c_str(), t.Name.c_str(), t.describe().c_str(), t.byteSize(), features[f].Name.c_str(),
              specText(features[f]).c_str(), features[f].byteSize());
        input.Feature = f;
        used[f] = true;
        break;
      }
    }
    binding.Inputs.push_back(input);
  }
  for (size_t f = 0; f < features.size(); ++f)
    if (!used[f])
      binding.Unused.push_back(features[f].Name);
  return binding;
}

llvm::Error PolicyModel::evaluate(const PolicyBinding &binding, llvm::ArrayRef<llvm::StringRef> features) {
  for (const PolicyBinding::Input &input : binding.Inputs) {
    llvm::MutableArrayRef<char> data = Model->data(input.Tensor);
    if (!input.Feature) {
      std::memset(data.data(), 0, data.size());
      continue;
    }
    llvm::StringRef bytes = features[*input.Feature];
    if (bytes.size() != data.size())
      return llvm::createStringError("%s: input '%s' got %zu bytes, not %zu", Model->path().c_str(),
                                     Model->tensors()[input.Tensor].Name.c_str(), bytes.size(), data.size());
    std::memcpy(data.data(), bytes.data(), bytes.size());
  }
  return Model->invoke();
}

llvm::StringRef PolicyModel::output(size_t i) const {
  llvm::ArrayRef<char> data = Model->data(Outputs[i].Tensor);
  return llvm::StringRef(data.data(), data.size());
}

int64_t PolicyModel::decision() const { return Outputs[0].Spec.elementAsInt(output(0), 0); }

} // namespace mlgo::model
