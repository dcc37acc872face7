// mlgo-policy: inspect an MLGO policy directory (model.tflite +
// output_spec.json) and evaluate it natively, on observations given as JSON
// or on every observation of a training log.
#include "mlgo/log/TrainingLog.h"
#include "mlgo/model/PolicyModel.h"
#include "mlgo/support/CommandLine.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sys/resource.h>

using namespace mlgo;
using namespace mlgo::model;

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "mlgo-policy: error: %s\n", message.c_str());
  return 1;
}

void writeOut(const std::string &text) { std::fwrite(text.data(), 1, text.size(), stdout); }

nlohmann::ordered_json shapeJson(const std::vector<int64_t> &shape) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (int64_t d : shape)
    j.push_back(d);
  return j;
}

nlohmann::ordered_json tensorValue(const TensorSpec &spec, llvm::StringRef bytes) {
  auto element = [&](size_t i) -> nlohmann::ordered_json {
    if (isFloatingPoint(spec.Type))
      return spec.elementAsDouble(bytes, i);
    return spec.elementAsInt(bytes, i);
  };
  if (spec.elementCount() == 1)
    return element(0);
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  for (size_t i = 0; i < spec.elementCount(); ++i)
    values.push_back(element(i));
  return values;
}

// The compiler feature a model input stands for: action_<feature>:0.
std::string featureOf(const TFLiteModel &m, const GraphPort &port) {
  llvm::StringRef name = m.tensors()[port.Tensor].Name;
  name.consume_back(":0");
  if (name.consume_front("action_"))
    return name.str();
  llvm::StringRef sig = port.Name;
  sig.consume_front("action_");
  return sig.str();
}

std::optional<ElementType> specType(DType t) {
  switch (t) {
  case DType::Float32:
    return ElementType::Float;
  case DType::Int32:
    return ElementType::Int32;
  case DType::Int64:
    return ElementType::Int64;
  case DType::Bool:
    return ElementType::UInt8;
  }
  return std::nullopt;
}

int show(const std::string &dir, bool json) {
  auto policy = PolicyModel::load(dir);
  if (!policy)
    return fail(llvm::toString(policy.takeError()));
  const TFLiteModel &m = (*policy)->model();
  nlohmann::ordered_json j;
  j["model"] = m.path();
  j["signature"] = m.signature().empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(m.signature());
  j["signatures"] = m.signatures();
  j["subgraph"] = m.subgraph();
  j["inputs"] = nlohmann::ordered_json::array();
  for (const GraphPort &p : m.inputs()) {
    const TensorInfo &t = m.tensors()[p.Tensor];
    j["inputs"].push_back({{"name", p.Name},
                           {"tensor", t.Name},
                           {"feature", featureOf(m, p)},
                           {"type", dtypeName(t.Type)},
                           {"shape", shapeJson(t.Shape)}});
  }
  j["outputs"] = nlohmann::ordered_json::array();
  for (const PolicyOutput &o : (*policy)->outputs()) {
    const TensorInfo &t = m.tensors()[o.Tensor];
    j["outputs"].push_back({{"logging_name", o.LoggingName},
                            {"tensor", t.Name},
                            {"type", dtypeName(t.Type)},
                            {"shape", shapeJson(t.Shape)}});
  }
  j["operators"] = m.operatorNames();
  if (json) {
    writeOut(j.dump(2) + "\n");
    return 0;
  }
  std::string text = "model: " + m.path() + "\n";
  text += "signature: " + (m.signature().empty() ? "(none: subgraph 0)" : m.signature()) + ", subgraph " +
          std::to_string(m.subgraph());
  if (!m.signatures().empty()) {
    std::string all;
    for (const std::string &k : m.signatures())
      all += (all.empty() ? "" : ", ") + k;
    text += " (signatures: " + all + ")";
  }
  text += "\ninputs (" + std::to_string(m.inputs().size()) + "):\n";
  for (const GraphPort &p : m.inputs())
    text += "  " + m.tensors()[p.Tensor].Name + " " + m.tensors()[p.Tensor].describe() + "  <- feature " +
            featureOf(m, p) + "\n";
  text += "outputs (output_spec.json):\n";
  for (size_t i = 0; i < (*policy)->outputs().size(); ++i) {
    const PolicyOutput &o = (*policy)->outputs()[i];
    text += "  " + o.LoggingName + " = " + m.tensors()[o.Tensor].Name + " " + m.tensors()[o.Tensor].describe() +
            (i == 0 ? "  (the decision)" : "  (logged)") + "\n";
  }
  text += "operators (" + std::to_string(m.operatorNames().size()) + "):\n";
  size_t k = 0;
  for (const std::string &op : m.operatorNames())
    text += "  " + std::to_string(k++) + " " + op + "\n";
  writeOut(text);
  return 0;
}

nlohmann::ordered_json resultJson(const PolicyModel &policy) {
  nlohmann::ordered_json r;
  r["decision"] = policy.decision();
  nlohmann::ordered_json outputs;
  for (size_t i = 0; i < policy.outputs().size(); ++i)
    outputs[policy.outputs()[i].LoggingName] = tensorValue(policy.outputs()[i].Spec, policy.output(i));
  r["outputs"] = std::move(outputs);
  return r;
}

// A number as an observation shows it in errors.
std::string numberText(const nlohmann::json &value, double v) {
  if (value.is_number_integer())
    return value.dump();
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

// Writes `v` (the JSON `value`) at `at` as `type`: integers exactly, other
// numbers truncated toward zero (as C++ converts them). False when the type
// cannot hold it, e.g. 1e300 in an int64 or a float32: converting such a
// value is undefined behaviour in C++, so it is an error, not a guess.
bool storeInput(const nlohmann::json &value, double v, ElementType type, char *at) {
  auto integer = [&](auto *out) {
    using T = std::remove_pointer_t<decltype(out)>;
    using Limits = std::numeric_limits<T>;
    if (value.is_number_unsigned()) {
      uint64_t u = value.get<uint64_t>();
      if (u > static_cast<uint64_t>(Limits::max()))
        return false;
      *out = static_cast<T>(u);
    } else if (value.is_number_integer()) {
      int64_t x = value.get<int64_t>();
      if (x < Limits::min() || x > Limits::max())
        return false;
      *out = static_cast<T>(x);
    } else {
      // [min, max + 1) after truncation; both bounds are exact doubles.
      double t = std::trunc(v);
      if (!(t >= static_cast<double>(Limits::min()) && t < static_cast<double>(Limits::max()) + 1.0))
        return false;
      *out = static_cast<T>(t);
    }
    return true;
  };
  switch (type) {
  case ElementType::Float: {
    if (std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max())
      return false;
    float x = static_cast<float>(v);
    std::memcpy(at, &x, 4);
    return true;
  }
  case ElementType::Int32: {
    int32_t x = 0;
    if (!integer(&x))
      return false;
    std::memcpy(at, &x, 4);
    return true;
  }
  case ElementType::Int64: {
    int64_t x = 0;
    if (!integer(&x))
      return false;
    std::memcpy(at, &x, 8);
    return true;
  }
  default: // a bool input
    *at = v != 0;
    return true;
  }
}

// Observations as JSON objects (one per line, or a single object): each
// model input's feature by name, a number or an array; absent ones are zeros.
int evalJson(PolicyModel &policy, std::istream &in, const std::string &source) {
  const TFLiteModel &m = policy.model();
  std::vector<TensorSpec> specs;
  std::vector<DType> types;
  for (const GraphPort &p : m.inputs()) {
    const TensorInfo &t = m.tensors()[p.Tensor];
    types.push_back(t.Type);
    TensorSpec spec;
    spec.Name = featureOf(m, p);
    spec.Type = *specType(t.Type);
    spec.Shape = t.Shape;
    specs.push_back(spec);
  }
  auto binding = policy.bind(specs);
  if (!binding)
    return fail(llvm::toString(binding.takeError()));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<nlohmann::json> observations;
  try {
    auto whole = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!whole.is_discarded() && whole.is_object()) {
      observations.push_back(whole);
    } else {
      std::istringstream lines(text);
      size_t number = 0;
      for (std::string line; std::getline(lines, line);) {
        ++number;
        if (llvm::StringRef(line).trim().empty())
          continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object())
          return fail(source + ":" + std::to_string(number) + ": not a JSON object");
        observations.push_back(std::move(j));
      }
    }
  } catch (std::exception &e) {
    return fail(source + ": " + e.what());
  }
  std::set<std::string> warned;
  for (size_t n = 0; n < observations.size(); ++n) {
    const nlohmann::json &obs = observations[n];
    std::vector<std::string> bytes(specs.size());
    for (size_t f = 0; f < specs.size(); ++f) {
      const TensorSpec &spec = specs[f];
      bytes[f].assign(spec.byteSize(), '\0');
      auto it = obs.find(spec.Name);
      if (it == obs.end()) {
        if (warned.insert(spec.Name).second)
          std::fprintf(stderr, "mlgo-policy: note: %s: no '%s' in the observation: fed zeros\n", source.c_str(),
                       spec.Name.c_str());
        continue;
      }
      std::vector<nlohmann::json> values =
          it->is_array() ? it->get<std::vector<nlohmann::json>>() : std::vector<nlohmann::json>{*it};
      if (values.size() != spec.elementCount())
        return fail(source + ": observation " + std::to_string(n) + ": '" + spec.Name + "' has " +
                    std::to_string(values.size()) + " values, the model takes " + std::to_string(spec.elementCount()));
      for (size_t i = 0; i < values.size(); ++i) {
        // JSON has no infinities or NaN: "inf", "-inf" and "nan" stand for them.
        std::optional<double> special;
        if (values[i].is_string()) {
          const std::string &text = values[i].get_ref<const std::string &>();
          if (text == "inf" || text == "-inf" || text == "nan")
            special = text == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                    : (text[0] == '-' ? -1 : 1) * std::numeric_limits<double>::infinity();
        }
        if (!values[i].is_number() && !values[i].is_boolean() && !special)
          return fail(source + ": observation " + std::to_string(n) + ": '" + spec.Name +
                      "' is not a number (nor \"inf\", \"-inf\", \"nan\")");
        if (special && spec.Type != ElementType::Float)
          return fail(source + ": observation " + std::to_string(n) + ": '" + spec.Name + "' is an integer input");
        char *at = bytes[f].data() + i * elementSize(spec.Type);
        double v = special ? *special : values[i].is_boolean() ? values[i].get<bool>() : values[i].get<double>();
        if (!storeInput(values[i], v, spec.Type, at))
          return fail(source + ": observation " + std::to_string(n) + ": '" + spec.Name + "' is " +
                      numberText(values[i], v) + ", out of range for " + dtypeName(types[f]));
      }
    }
    std::vector<llvm::StringRef> refs(bytes.begin(), bytes.end());
    if (llvm::Error e = policy.evaluate(*binding, refs))
      return fail(llvm::toString(std::move(e)));
    writeOut(resultJson(policy).dump() + "\n");
  }
  return 0;
}

// Every observation of a training log, bound by the log's header as the
// harvester binds the compiler's features.
int evalLog(PolicyModel &policy, const std::string &path) {
  std::optional<PolicyBinding> binding;
  std::vector<llvm::StringRef> pieces;
  llvm::Error e = visitLog(path, [&](TrainingLogReader &reader, TrainingLogReader::Event event) -> llvm::Error {
    if (event == TrainingLogReader::Event::Header) {
      auto bound = policy.bind(reader.header().Features);
      if (!bound)
        return bound.takeError();
      binding = std::move(*bound);
      pieces.resize(reader.header().Features.size());
    } else if (event == TrainingLogReader::Event::Observation) {
      for (size_t i = 0; i < pieces.size(); ++i)
        pieces[i] = reader.feature(i);
      if (llvm::Error err = policy.evaluate(*binding, pieces))
        return err;
      nlohmann::ordered_json r;
      r["context"] = reader.context();
      r["observation"] = reader.observationIndex();
      nlohmann::ordered_json result = resultJson(policy);
      r["decision"] = result["decision"];
      r["outputs"] = result["outputs"];
      writeOut(r.dump() + "\n");
    }
    return llvm::Error::success();
  });
  if (e)
    return fail(llvm::toString(std::move(e)));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Inspect an MLGO policy directory (model.tflite + output_spec.json, as ml-compiler-opt writes it) and "
               "evaluate it with the same native evaluator as harvest-logs --policy=tflite:DIR.",
               "mlgo-policy"};
  app.get_formatter()->column_width(30);
  app.require_subcommand(1);
  std::string dir, observations, log;
  bool json = false, bench = false;
  CLI::App *showCmd =
      app.add_subcommand("show", "Print the model's signature, inputs (and the features they bind), outputs (from "
                                 "output_spec.json; the first is the decision) and operators.");
  showCmd->add_option("DIR", dir, "The policy directory.")->required();
  showCmd->add_flag("--json", json, "Print JSON instead of text.");
  CLI::App *evalCmd = app.add_subcommand(
      "eval", "Evaluate the policy and print one JSON line per observation: {\"decision\": N, \"outputs\": "
              "{logging_name: value}} (with context and observation number for --log).");
  evalCmd->add_option("DIR", dir, "The policy directory.")->required();
  auto *obsOpt = evalCmd->add_option(
      "--observation,--observations", observations,
      "A JSON file ('-' for standard input): one object, or one object per line (training-log dump's jsonl), "
      "mapping feature names to a number or an array (\"inf\", \"-inf\", \"nan\" for values JSON cannot "
      "hold). Model inputs it does not name are fed zeros.");
  auto *logOpt = evalCmd->add_option("--log", log,
                                     "A training log: evaluate every observation, features bound by "
                                     "the log's header as harvest-logs binds the compiler's.");
  obsOpt->excludes(logOpt);
  evalCmd->add_flag("--bench", bench,
                    "Only time the evaluations (--log): print the mean microseconds per "
                    "decision over at least one second.");
  if (auto status = parseCommandLine(app, argc, argv))
    return *status;
  if (showCmd->parsed())
    return show(dir, json);

  auto policy = PolicyModel::load(dir);
  if (!policy)
    return fail(llvm::toString(policy.takeError()));
  if (!log.empty()) {
    if (!bench)
      return evalLog(**policy, log);
    // Loads the log's observations once, then evaluates them in a loop.
    std::vector<std::string> observationsBytes;
    std::vector<TensorSpec> features;
    if (llvm::Error e = visitLog(log, [&](TrainingLogReader &reader, TrainingLogReader::Event event) {
          if (event == TrainingLogReader::Event::Header)
            features = reader.header().Features;
          if (event == TrainingLogReader::Event::Observation)
            observationsBytes.push_back(reader.observation().str());
          return llvm::Error::success();
        }))
      return fail(llvm::toString(std::move(e)));
    if (observationsBytes.empty())
      return fail(log + ": no observations");
    auto binding = (*policy)->bind(features);
    if (!binding)
      return fail(llvm::toString(binding.takeError()));
    std::vector<llvm::StringRef> pieces(features.size());
    size_t count = 0;
    int64_t sink = 0;
    // CPU time, not wall time: a loaded machine must not inflate the figure.
    auto cpu = [] {
      struct rusage usage {};
      ::getrusage(RUSAGE_SELF, &usage);
      return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
             static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    };
    double start = cpu(), seconds = 0;
    while (seconds < 1.0) {
      for (const std::string &obs : observationsBytes) {
        size_t offset = 0;
        for (size_t i = 0; i < features.size(); ++i) {
          pieces[i] = llvm::StringRef(obs).substr(offset, features[i].byteSize());
          offset += features[i].byteSize();
        }
        if (llvm::Error e = (*policy)->evaluate(*binding, pieces))
          return fail(llvm::toString(std::move(e)));
        sink += (*policy)->decision();
        ++count;
      }
      seconds = cpu() - start;
    }
    nlohmann::ordered_json r;
    r["decisions"] = count;
    r["seconds"] = seconds;
    r["us_per_decision"] = seconds * 1e6 / static_cast<double>(count);
    r["decision_sum"] = sink;
    writeOut(r.dump() + "\n");
    return 0;
  }
  if (observations.empty() || observations == "-")
    return evalJson(**policy, std::cin, "<stdin>");
  std::ifstream in(observations);
  if (!in)
    return fail(observations + ": cannot open");
  return evalJson(**policy, in, observations);
}
