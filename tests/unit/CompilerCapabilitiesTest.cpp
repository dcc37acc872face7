// What the compiler supports: our own LLVM's tools are known without being
// started (they run the libLLVM we have loaded), and agree with the probe
// that any other compiler gets.
#include "mlgo/compile/CompilerDriver.h"
#include "mlgo/compile/OwnLlvmTools.h"

#include "support/TestSupport.h"

using namespace mlgo;
using namespace mlgo::test;

namespace {

struct Tool {
  CompilerKind Kind;
  const char *Program, *Name;
};
const Tool OwnTools[] = {{CompilerKind::Opt, "opt-22", "opt"},
                         {CompilerKind::Llc, "llc-22", "llc"},
                         {CompilerKind::Clang, "clang-22", "clang"}};
const Problem Problems[] = {Problem::Inliner, Problem::RegallocEvict, Problem::RegallocPriority};

TEST(CompilerCapabilities, OwnToolsAreKnownAndAgreeWithTheirProbe) {
  for (const Tool &tool : OwnTools) {
    ASSERT_TRUE(isOwnLlvmTool(tool.Program, tool.Name)) << tool.Program;
    for (Problem problem : Problems) {
      auto known = compilerCapabilities(tool.Program, tool.Kind, problem);
      auto probed = probeCompiler(tool.Program, tool.Kind, problem);
      ASSERT_TRUE(static_cast<bool>(known) && static_cast<bool>(probed)) << tool.Program;
      EXPECT_EQ(known->MajorVersion, probed->MajorVersion) << tool.Program;
      EXPECT_EQ(known->MajorVersion, 22);
      EXPECT_EQ(known->DevelopmentMode, probed->DevelopmentMode) << tool.Program << " " << static_cast<int>(problem);
    }
  }
}

TEST(CompilerCapabilities, AnotherCompilerIsStartedAndWhatItSaysCounts) {
  TempDir dir;
  // A development-mode compiler of another LLVM, as far as its answers go
  // (what it says is all that shows it ran: the probe confines its writes).
  std::string fake = writeScript(dir / "fake-opt", "#!/bin/sh\n"
                                                   "case \"$1\" in\n"
                                                   "--version) echo 'LLVM version 19.1.0' ;;\n"
                                                   "--help-hidden) echo '  --training-log=<string>' ;;\n"
                                                   "esac\n");
  EXPECT_FALSE(isOwnLlvmTool(fake, "opt"));
  auto caps = compilerCapabilities(fake, CompilerKind::Opt, Problem::Inliner);
  ASSERT_TRUE(static_cast<bool>(caps)) << llvm::toString(caps.takeError());
  EXPECT_EQ(caps->MajorVersion, 19);
  EXPECT_TRUE(caps->DevelopmentMode);
  auto regalloc = compilerCapabilities(fake, CompilerKind::Opt, Problem::RegallocEvict);
  ASSERT_TRUE(static_cast<bool>(regalloc));
  EXPECT_FALSE(regalloc->DevelopmentMode) << "-training-log is not -regalloc-training-log";
}

TEST(CompilerCapabilities, ALinkToOurOptIsOursAndAWrapperIsNot) {
  TempDir dir;
  std::string real = resolvedProgram("opt-22");
  ASSERT_FALSE(real.empty());
  ASSERT_EQ(::symlink(real.c_str(), (dir / "opt").c_str()), 0);
  EXPECT_TRUE(isOwnLlvmTool(dir / "opt", "opt"));
  EXPECT_FALSE(isOwnLlvmTool(dir / "opt", "llc"));
  std::string wrapper = writeScript(dir / "wrapped-opt", "#!/bin/sh\nexec opt-22 \"$@\"\n");
  EXPECT_FALSE(isOwnLlvmTool(wrapper, "opt"));
  EXPECT_FALSE(isOwnLlvmTool(dir / "missing", "opt"));
  EXPECT_NE(whyNotOwnLlvmTool("opt_path", wrapper, "opt").find("runs " + wrapper), std::string::npos);
}

} // namespace
