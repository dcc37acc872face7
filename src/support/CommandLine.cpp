#include "mlgo/support/CommandLine.h"

#include "mlgo/support/Version.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace mlgo {
namespace {

void collectOptions(const CLI::App &app, std::vector<const CLI::Option *> &out) {
  for (const CLI::Option *option : app.get_options())
    out.push_back(option);
  for (const CLI::App *sub : app.get_subcommands({}))
    collectOptions(*sub, out);
}

// Expands an unambiguous prefix of a long flag (argparse's allow_abbrev).
// Returns an error message for an ambiguous prefix.
std::optional<std::string> expandPrefix(const CLI::App &app, std::string &arg) {
  size_t eq = arg.find('=');
  std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  std::set<std::string> owners;
  std::string expansion;
  std::vector<const CLI::Option *> options;
  collectOptions(app, options);
  for (const CLI::Option *option : options) {
    for (const std::string &lname : option->get_lnames()) {
      if (lname == name)
        return std::nullopt;
      if (lname.rfind(name, 0) == 0) {
        owners.insert(option->get_name());
        expansion = lname;
      }
    }
  }
  if (owners.size() > 1) {
    std::string names;
    for (const std::string &owner : owners)
      names += (names.empty() ? "" : ", ") + owner;
    return "ambiguous option: --" + name + " could match " + names;
  }
  if (owners.size() == 1)
    arg = "--" + expansion + (eq == std::string::npos ? "" : arg.substr(eq));
  return std::nullopt;
}

} // namespace

std::optional<int> parseCommandLine(CLI::App &app, int argc, char **argv,
                                    const std::vector<std::string> &versionDetails) {
  std::string tool = app.get_name();
  app.set_version_flag(
      "--version", [tool, versionDetails] { return versionText(tool, versionDetails); },
      "Print the version of mlgo-corpus, the git revision and the LLVM version this tool was built from, and exit.");
  std::vector<std::string> args;
  bool positionalOnly = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--")
      positionalOnly = true;
    if (!positionalOnly && arg.size() > 2 && arg.rfind("--", 0) == 0) {
      if (std::optional<std::string> error = expandPrefix(app, arg)) {
        std::fprintf(stderr, "%s: error: %s\nRun with --help for more information.\n", app.get_name().c_str(),
                     error->c_str());
        return 2;
      }
    }
    args.push_back(std::move(arg));
  }
  std::reverse(args.begin(), args.end()); // CLI11 consumes the vector from its back.
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp &) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForAllHelp &) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion &e) {
    std::fputs(e.what(), stdout);
    return 0;
  } catch (const CLI::ParseError &e) {
    std::fprintf(stderr, "%s: error: %s\nRun with --help for more information.\n", app.get_name().c_str(), e.what());
    return 2;
  }
  return std::nullopt;
}

std::optional<std::string> optionalValue(const CLI::Option *option) {
  // CLI11 records a bare `--flag` as one empty value, like `--flag=`.
  if (option->count() == 0 || option->results().empty() || option->results().back().empty())
    return std::nullopt;
  return option->results().back();
}

} // namespace mlgo
