// Command-line handling shared by the tools, compatible with the reference
// tools' argparse conventions: --flag=value and --flag value, unique
// prefixes of long flags, exit status 2 on a usage error.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// Parses argv into `app`. Returns the exit status when the tool must stop
/// now (0 after --help or --version, 2 after a usage error, with the message
/// printed), or nullopt to go on. Every tool gets `--version`, which prints
/// versionText() with `versionDetails` as extra lines.
std::optional<int> parseCommandLine(CLI::App &app, int argc, char **argv,
                                    const std::vector<std::string> &versionDetails = {});

/// The value of an option declared with an optional value (`expected(0, 1)`):
/// nullopt when absent, given bare (the reference's None) or given empty.
std::optional<std::string> optionalValue(const CLI::Option *option);

} // namespace mlgo
