// What a loader maps of a linked binary, for comparing two builds of one
// program allocated section for allocated section.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace mlgo::test {

/// The allocated sections' bytes as the loader maps them (llvm-objcopy -O
/// binary), without the build id: lld hashes the whole file into it, the
/// embedded bitcode and debug sections too, which need not be equal.
std::string allocatedImage(const std::string &binary);

/// Whether two binaries map the same bytes; on failure, where they part
/// (printing whole images would bury the report).
::testing::AssertionResult sameImage(const std::string &a, const std::string &b);

} // namespace mlgo::test
