// The e2e suite compiles the same C fixtures with clang-22 hundreds of times
// (a quarter of its CPU time, measured with perf by command name). A compile
// whose output depends only on its command line and its source text is run
// once per build directory; later identical compiles copy its output.
#pragma once

#include <string>

namespace mlgo::test {

/// Runs `command` (a clang-22 compile, in `cwd`) that reads the source file
/// `source` (relative to `cwd`) and writes `output` (relative to `cwd`),
/// unless an earlier call with the same command, source text and clang
/// binary stored its output: then copies that. Both paths must be relative,
/// so that the output cannot depend on the (temporary) directory. (One
/// thing does: clang records its directory in the embedded command line's
/// -fdebug-compilation-dir, which no test reads.)
void compileCached(const std::string &command, const std::string &source, const std::string &output,
                   const std::string &cwd);

/// The cache's directory (in the build tree), for tests of the cache itself.
std::string fixtureCacheDirectory();

} // namespace mlgo::test
