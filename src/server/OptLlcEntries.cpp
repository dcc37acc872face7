// libMLGOOptLlc.so: opt and llc for the compile server's children. opt is
// optMain, opt's own main from Debian's libLLVMOptDriver.a; llc is
// LlcEntry.cpp. A library of its own, loaded by the server for opt and llc
// harvests only: clang's libclang-cpp (libMLGOClangCc1.so) registers some of
// the same LLVM options as opt's driver, and the two cannot share a process.
#include "mlgo/server/CompileServer.h"

#include "llvm/ADT/ArrayRef.h"

#include <functional>

namespace llvm {
class PassBuilder;
}

// No header ships with it.
extern "C" int optMain(int argc, char **argv,
                       llvm::ArrayRef<std::function<void(llvm::PassBuilder &)>> passBuilderCallbacks);

namespace mlgo::server {
ToolEntry llcEntry();
}

extern "C" __attribute__((visibility("default"))) int mlgoOptMain(int argc, char **argv) {
  return optMain(argc, argv, {});
}

extern "C" __attribute__((visibility("default"))) int mlgoLlcMain(int argc, char **argv) {
  return mlgo::server::llcEntry()(argc, argv);
}
