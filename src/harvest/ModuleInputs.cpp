#include "mlgo/harvest/ModuleInputs.h"

#include "mlgo/corpus/ModuleCommandLine.h"
#include "mlgo/support/PathUtil.h"

namespace mlgo {
namespace {

// A corpus' command line is clang's argv: refused when it loads code,
// writes or copies files or is off the -mllvm allow-list, and a driver
// line runs as the one cc1 job it makes, unless the user trusts the corpus
// (docs/security.md).
llvm::Expected<std::vector<std::string>> screened(const HarvestOptions &options, std::vector<std::string> args,
                                                  const std::string &source, const std::string &bitcode) {
  if (options.TrustCorpusCommands)
    return args;
  return screenedCompileLine(args, source, options.Compiler.Clang, bitcode);
}

} // namespace

llvm::Expected<ModuleInputs> harvestModuleInputs(const HarvestOptions &options, const CorpusDescription &corpus,
                                                 const std::string &module) {
  ModuleInputs in;
  in.Bitcode = joinPath(options.CorpusDir, module + ".bc");
  if (options.Compiler.Kind != CompilerKind::Clang)
    return in;
  if (auto override = corpus.Fields.find("global_command_override"); override != corpus.Fields.end()) {
    bool strings = override->is_array();
    for (const auto &arg : *override)
      strings = strings && arg.is_string();
    if (!strings || *override == nlohmann::ordered_json::array({"<UNSPECIFIED>"}))
      return llvm::createStringError("the corpus' global_command_override is %s: it must be the command line "
                                     "every module is compiled with",
                                     override->dump().c_str());
    auto line = screened(options, override->get<std::vector<std::string>>(), "global_command_override", in.Bitcode);
    if (!line)
      return line.takeError();
    in.CommandLine = std::move(*line);
    return in;
  }
  std::string cmdPath = joinPath(options.CorpusDir, module + ".cmd");
  auto args = readModuleCommandLine(cmdPath);
  if (!args)
    return args.takeError();
  auto line = screened(options, *args, cmdPath, in.Bitcode);
  if (!line)
    return line.takeError();
  in.CommandLine = std::move(*line);
  return in;
}

} // namespace mlgo
