// berkeleyTextSize and berkeleySizes read what a compiler (or a linker)
// wrote: only an object file for a known machine is measured, and a huge
// file is mapped, never read into memory whole.
#include "mlgo/evaluate/NativeSize.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace mlgo;
namespace fs = std::filesystem;

namespace {

TEST(NativeSize, ARealObjectIsMeasured) {
  test::TempDir dir;
  std::string source = dir / "a.c", object = dir / "a.o";
  test::writeFile(source, "int f(int x) { return x * 3; }\nconst int table[4] = {1, 2, 3, 4};\n");
  test::mustRun(test::quote(MLGO_CLANG) + " -Oz -c " + test::quote(source) + " -o " + test::quote(object));
  auto text = berkeleyTextSize(object);
  ASSERT_TRUE(bool(text)) << llvm::toString(text.takeError());
  EXPECT_GT(*text, 16u); // f's code and the table
  auto sizes = berkeleySizes(object);
  ASSERT_TRUE(bool(sizes)) << llvm::toString(sizes.takeError());
  EXPECT_GT(sizes->Text, 0u);
}

// Zeros read as a COFF object of no sections for no machine: size 0, which
// a harvest would take for the smallest trajectory.
TEST(NativeSize, ZerosAreNotAnObject) {
  test::TempDir dir;
  std::string zeros = dir / "zeros.o";
  test::writeFile(zeros, std::string(4096, '\0'));
  auto text = berkeleyTextSize(zeros);
  ASSERT_FALSE(bool(text));
  EXPECT_NE(llvm::toString(text.takeError()).find("zeros.o: not an object file for a known architecture"),
            std::string::npos);
  EXPECT_FALSE(bool(berkeleySizes(zeros))) << "both accept the same files";
  llvm::consumeError(berkeleySizes(zeros).takeError());
}

// 64 GiB of hole: mapped, its first bytes looked at, refused; not an
// allocation of 64 GiB (which the sanitizers abort on).
TEST(NativeSize, AHugeSparseFileIsNotReadIntoMemory) {
  test::TempDir dir;
  std::string hole = dir / "hole.o";
  test::writeFile(hole, "");
  fs::resize_file(hole, 64ull << 30);
  auto text = berkeleyTextSize(hole);
  ASSERT_FALSE(bool(text));
  EXPECT_NE(llvm::toString(text.takeError()).find("hole.o"), std::string::npos);
}

} // namespace
