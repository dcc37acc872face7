// What the link step refuses in an object (LinkInputs.h), on objects the
// real clang-22 makes: a plain one passes; one whose module names libraries,
// one carrying a link-time compiler's sections (as module asm can put
// there), and a linked executable are refused, each named.
#include "mlgo/evaluate/LinkInputs.h"

#include "support/TestSupport.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

using namespace mlgo;

namespace {

std::vector<std::string> directivesOf(const std::string &source, const std::string &flags = "-c") {
  test::TempDir dir;
  std::string c = dir / "m.c", object = dir / "m.o";
  test::writeFile(c, source);
  test::mustRun(test::quote(MLGO_CLANG) + " -Oz " + flags + " " + test::quote(c) + " -o " + test::quote(object));
  int fd = ::open(object.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << object;
  auto found = linkDirectives(fd, object);
  ::close(fd);
  if (!found)
    return {"error: " + llvm::toString(found.takeError())};
  return *found;
}

bool mentions(const std::vector<std::string> &found, const std::string &what) {
  for (const std::string &f : found)
    if (f.find(what) != std::string::npos)
      return true;
  return false;
}

TEST(LinkInputs, APlainObjectAsksForNothing) {
  EXPECT_EQ(directivesOf("int f(int x) { return x * 3; }\n"), std::vector<std::string>{});
}

TEST(LinkInputs, DependentLibrariesAreNamed) {
  auto found = directivesOf("#pragma comment(lib, \"/etc/hostname\")\nint f(int x) { return x; }\n");
  EXPECT_TRUE(mentions(found, ".deplibs")) << testing::PrintToString(found);
  EXPECT_TRUE(mentions(found, "/etc/hostname")) << testing::PrintToString(found);
}

TEST(LinkInputs, ALinkTimeCompilersSectionsAreRefused) {
  auto found = directivesOf("__asm__(\".section .gnu.lto_.opts,\\\"\\\",@progbits\\n.byte 1\\n.text\\n\");\n"
                            "__asm__(\".globl __gnu_lto_slim\\n__gnu_lto_slim = 1\\n\");\n"
                            "int f(int x) { return x; }\n");
  EXPECT_TRUE(mentions(found, ".gnu.lto_.opts")) << testing::PrintToString(found);
  EXPECT_TRUE(mentions(found, "__gnu_lto_slim")) << testing::PrintToString(found);
}

TEST(LinkInputs, OnlyARelocatableObjectIsLinked) {
  auto found = directivesOf("int main(void) { return 0; }\n", "-fuse-ld=lld");
  EXPECT_TRUE(mentions(found, "not a relocatable object")) << testing::PrintToString(found);
}

} // namespace
