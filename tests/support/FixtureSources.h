// C sources the end-to-end tests compile with the real clang-22: modules with
// many inlinable call sites, and functions with high register pressure.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mlgo::test {

/// A module with `leaves` small static functions and `mids` functions making
/// six calls each (mid<f><midSuffix>); with `withDriver`, also `top`, calling
/// every mid in a loop: 6 * mids (+ mids) inlinable call sites.
std::string inlinerSource(int leaves, int mids, bool withDriver = true, const std::string &midSuffix = "");

/// A function `name` keeping `live` doubles alive across a loop: beyond x86-64's
/// 16 vector registers, it makes the register allocator evict.
std::string pressureFunction(const std::string &name, int live);

/// A C program (main, vec, util, fib) whose modules call into each other,
/// with enough small functions that inlining decisions change the code, and
/// output that depends on them all (a miscompiled binary prints otherwise).
std::vector<std::pair<std::string, std::string>> linkedProgramSources();

/// `modules` modules whose -Oz inliner says no as well as yes: callees of 1
/// to 24 statements, each called from several callers.
std::vector<std::pair<std::string, std::string>> mixedDecisionSources(int modules);

} // namespace mlgo::test
