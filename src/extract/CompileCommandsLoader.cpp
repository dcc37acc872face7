#include "mlgo/extract/InputLoaders.h"

#include "mlgo/extract/OutputOption.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/ShellWords.h"

#include "mlgo/support/JsonFile.h"

#include <nlohmann/json.hpp>

namespace mlgo {

llvm::Expected<LoadedInput> loadCompileCommands(llvm::StringRef path) {
  auto parsed = readJsonFile(path);
  if (!parsed)
    return parsed.takeError();
  nlohmann::json db = std::move(*parsed);
  if (!db.is_array())
    return llvm::createStringError("%s: a compilation database must be a JSON array of entries", path.str().c_str());

  LoadedInput loaded;
  for (size_t i = 0; i < db.size(); ++i) {
    const nlohmann::json &entry = db[i];
    std::string origin = path.str() + " entry " + std::to_string(i + 1);
    auto skip = [&](const char *reason, std::string detail) {
      log::info(origin + ": " + detail);
      loaded.Skipped.push_back({origin, reason, std::move(detail)});
    };
    if (!entry.is_object()) {
      skip("bad_entry", "entry is not a JSON object");
      continue;
    }
    auto directory = entry.find("directory");
    if (directory == entry.end() || !directory->is_string()) {
      skip("no_directory", "entry has no \"directory\" string");
      continue;
    }
    std::vector<std::string> args;
    if (auto arguments = entry.find("arguments"); arguments != entry.end()) {
      bool allStrings = arguments->is_array();
      if (allStrings)
        for (const auto &a : *arguments)
          allStrings = allStrings && a.is_string();
      if (!allStrings) {
        skip("bad_entry", "\"arguments\" is not a list of strings");
        continue;
      }
      args = arguments->get<std::vector<std::string>>();
    } else if (auto command = entry.find("command"); command != entry.end() && command->is_string()) {
      auto words = splitShellWords(command->get<std::string>());
      if (!words) {
        skip("bad_command", "cannot split \"command\": " + llvm::toString(words.takeError()));
        continue;
      }
      args = std::move(*words);
    } else {
      skip("no_command", "compile_commands element has no command and arguments");
      continue;
    }

    auto output = findOutputOption(args);
    if (!output) {
      skip("missing_output_value", llvm::toString(output.takeError()));
      continue;
    }
    std::string object;
    if (*output) {
      object = (*output)->Path;
    } else if (auto field = entry.find("output"); field != entry.end() && field->is_string()) {
      object = field->get<std::string>();
    } else {
      std::string joined;
      for (const std::string &a : args)
        joined += (joined.empty() ? "" : " ") + a;
      skip("no_output_option", "Command has no -o option: " + joined);
      continue;
    }
    if (object.empty()) {
      skip("missing_output_value", "the output option names an empty path");
      continue;
    }
    std::string base = directory->get<std::string>();
    // open() would stop at a NUL byte and read another file than the one named.
    if (llvm::StringRef(object).contains('\0') || llvm::StringRef(base).contains('\0')) {
      skip("bad_object_path", "the object path or directory contains a NUL byte");
      continue;
    }
    loaded.Candidates.push_back({std::move(object), std::move(base), std::move(origin)});
  }
  return loaded;
}

} // namespace mlgo
