// libMLGOOptLlc.so: opt and llc for the compile server's children. opt is
// optMain, opt's own main from Debian's libLLVMOptDriver.a; llc is
// LlcEntry.cpp. A library of its own, loaded by the server for opt and llc
// harvests only: clang's libclang-cpp (libMLGOClangCc1.so) registers some of
// the same LLVM options as opt's driver, and the two cannot share a process.
#include "mlgo/server/CompileServer.h"
#include "mlgo/server/CompileServerProtocol.h"

#include "llvm/ADT/Any.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <fcntl.h>
#include <functional>
#include <string>
#include <unistd.h>

// No header ships with it.
extern "C" int optMain(int argc, char **argv,
                       llvm::ArrayRef<std::function<void(llvm::PassBuilder &)>> passBuilderCallbacks);

namespace mlgo::server {
ToolEntry llcEntry();
int llcOnModule(llvm::Module &module, int argc, char **argv);
} // namespace mlgo::server

namespace {

// llc's -o value in its argv ("" when absent).
std::string outputOf(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-o" && i + 1 < argc)
      return argv[i + 1];
    if (arg.rfind("-o=", 0) == 0)
      return arg.substr(3);
  }
  return "";
}

// Test seam (docs/compile-server.md): MLGO_COMPILE_SERVER_FAULT=abort-codegen:TEXT
// aborts where code generation would begin when opt's argv mentions TEXT.
void maybeAbortCodegen(int argc, char **argv) {
  const char *spec = std::getenv("MLGO_COMPILE_SERVER_FAULT");
  constexpr llvm::StringLiteral Kind = "abort-codegen:";
  if (!spec || !llvm::StringRef(spec).starts_with(Kind))
    return;
  llvm::StringRef text = llvm::StringRef(spec).drop_front(Kind.size());
  for (int i = 0; i < argc; ++i)
    if (llvm::StringRef(argv[i]).contains(text))
      std::abort();
}

// harvest-logs --explore's fork chains (src/plugin/ExplorationChain.h): a
// resumed checkpoint writes its own object, and every trajectory's end lets
// the inliner plugin go on with the chain. True in such a checkpoint.
bool useChainObject(int argc, char **argv) {
  static std::string object;
  const char *chained = std::getenv("MLGO_INLINER_CHAIN_OBJECT");
  if (!chained)
    return false;
  object = chained;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "-o")
      argv[i + 1] = object.data();
  return true;
}

int endTrajectory(int status) {
  using TrajectoryEnd = void (*)(int);
  auto end =
      reinterpret_cast<TrajectoryEnd>(llvm::sys::DynamicLibrary::SearchForAddressOfSymbol("mlgoInlinerTrajectoryEnd"));
  if (end) {
    llvm::outs().flush();
    llvm::errs().flush();
    end(status);
  }
  return status;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int mlgoOptMain(int argc, char **argv) {
  return optMain(argc, argv, {});
}

extern "C" __attribute__((visibility("default"))) int mlgoLlcMain(int argc, char **argv) {
  return mlgo::server::llcEntry()(argc, argv);
}

// opt, then llc on the module opt has just written: code generation runs
// right after opt's bitcode writer (the last pass of its pipeline), on the
// module in memory, instead of in a second child that would start, read the
// bitcode back and verify it again.
extern "C" __attribute__((visibility("default"))) int mlgoOptThenLlcMain(int argc, char **argv, int llcArgc,
                                                                         char **llcArgv) {
  int codegenStatus = -1; // -1: not run
  std::function<void(llvm::PassBuilder &)> afterWriting = [&](llvm::PassBuilder &builder) {
    llvm::PassInstrumentationCallbacks *callbacks = builder.getPassInstrumentationCallbacks();
    if (!callbacks)
      return;
    callbacks->registerAfterPassCallback([&](llvm::StringRef pass, llvm::Any ir, const llvm::PreservedAnalyses &) {
      const llvm::Module *const *module = llvm::any_cast<const llvm::Module *>(&ir);
      if (pass != "BitcodeWriterPass" || !module || codegenStatus != -1)
        return;
      // From here a failure is codegen's (the harvester reads the marker).
      // Not for an explored trajectory of a fork chain: one that fails is
      // compiled again by its round, which says why.
      if (!useChainObject(llcArgc, llcArgv)) {
        std::string marker = mlgo::server::codegenStartedMarker(outputOf(llcArgc, llcArgv));
        int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0)
          ::close(fd);
      }
      maybeAbortCodegen(argc, argv);
      // The pipeline is over and its output written: the module is ours to lower.
      codegenStatus = mlgo::server::llcOnModule(const_cast<llvm::Module &>(**module), llcArgc, llcArgv);
    });
  };
  int status = optMain(argc, argv, {afterWriting});
  if (status != 0)
    return endTrajectory(status);
  if (codegenStatus == -1) {
    llvm::errs() << "mlgo-compile-server: opt wrote no bitcode, so llc had no module to compile\n";
    return endTrajectory(1);
  }
  return endTrajectory(codegenStatus);
}
