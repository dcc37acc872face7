// Which build of mlgo-corpus is running: the project version (set once, in
// the top-level CMakeLists.txt), the git revision it was built from when
// known, and the LLVM it was built against.
#pragma once

#include <string>
#include <vector>

namespace mlgo {

/// "0.1.0": the project version alone.
const char *projectVersion();

/// The git revision the build came from ("1a2b3c4d5e6f", with "-dirty" for
/// uncommitted changes), or "" when the source was not a git checkout.
const char *gitRevision();

/// "22.1.8": the LLVM the tools were built against.
const char *llvmVersion();

/// One line for JSON outputs, so that a corpus or a harvest says which build
/// made it: "mlgo-corpus 0.1.0 (git 1a2b3c4d5e6f, LLVM 22.1.8)".
std::string versionString();

/// What `TOOL --version` prints, in the layout of LLVM tools' --version.
/// `extraLines` (each without indentation or newline) follow the standard
/// ones, e.g. the compiler a tool drives by default.
std::string versionText(const std::string &tool, const std::vector<std::string> &extraLines = {});

} // namespace mlgo
