#include "mlgo/policy/Policy.h"

#include "llvm/ADT/StringExtras.h"

namespace mlgo {

std::string PolicySpec::describe() const {
  switch (How) {
  case Kind::Default:
    return "default";
  case Kind::Random:
    return "random:" + std::to_string(Probability) + ":" + std::to_string(Seed);
  case Kind::Exec:
    return "exec:" + Command;
  case Kind::Model:
    return "model:" + ModelDir;
  case Kind::TFLite:
    return "tflite:" + ModelDir;
  case Kind::InProcess:
    return InProcess;
  case Kind::Replay:
    return "replay:" + ReplayFile;
  }
  return "default";
}

llvm::Expected<PolicySpec> parsePolicy(llvm::StringRef text) {
  PolicySpec spec;
  if (text == "default")
    return spec;
  if (text.consume_front("random:")) {
    auto [p, seed] = text.split(':');
    spec.How = PolicySpec::Kind::Random;
    if (p.getAsDouble(spec.Probability) || spec.Probability < 0 || spec.Probability > 1)
      return llvm::createStringError("--policy=random:P[:SEED]: P must be a probability in [0, 1], not '%s'",
                                     p.str().c_str());
    if (!seed.empty() && seed.getAsInteger(10, spec.Seed))
      return llvm::createStringError("--policy=random:P[:SEED]: SEED must be an integer, not '%s'", seed.str().c_str());
    return spec;
  }
  if (text.consume_front("exec:")) {
    if (text.trim().empty())
      return llvm::createStringError("--policy=exec:CMD needs a command");
    spec.How = PolicySpec::Kind::Exec;
    spec.Command = text.str();
    return spec;
  }
  if (text.consume_front("model:")) {
    if (text.empty())
      return llvm::createStringError("--policy=model:DIR needs a directory");
    spec.How = PolicySpec::Kind::Model;
    spec.ModelDir = text.str();
    return spec;
  }
  if (text.consume_front("tflite:")) {
    if (text.empty())
      return llvm::createStringError("--policy=tflite:DIR needs a directory");
    spec.How = PolicySpec::Kind::TFLite;
    spec.ModelDir = text.str();
    return spec;
  }
  if (text.consume_front("replay:")) {
    if (text.empty())
      return llvm::createStringError("--policy=replay:FILE needs a trajectories file");
    spec.How = PolicySpec::Kind::Replay;
    spec.ReplayFile = text.str();
    return spec;
  }
  // NAME[:ARG]: an in-process policy; the plugin checks the name when it loads.
  llvm::StringRef name = text.split(':').first;
  if (!name.empty() && llvm::isAlpha(name.front()) &&
      name.find_if_not([](char c) { return llvm::isAlnum(c) || c == '_' || c == '-' || c == '.'; }) == name.npos) {
    spec.How = PolicySpec::Kind::InProcess;
    spec.InProcess = text.str();
    return spec;
  }
  return llvm::createStringError("--policy must be default, random:P[:SEED], exec:CMD, model:DIR, tflite:DIR, "
                                 "replay:FILE or NAME[:ARG] of an in-process plugin policy, not '%s'",
                                 text.str().c_str());
}

} // namespace mlgo
