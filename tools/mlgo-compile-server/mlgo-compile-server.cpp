// mlgo-compile-server: started by harvest-logs (--compile_server), one per
// worker; forks a warm child per compile that runs opt or llc in-process
// (docs/compile-server.md). Not meant to be run by hand.
#include "mlgo/server/CompileServer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

// The server is linked with -z now, but that binds only its own symbols:
// libLLVM's calls into libc and libstdc++ stay lazily bound, and each child
// would look them up again (on an empty module, a tenth of its page faults
// were the dynamic linker's). Under LD_BIND_NOW the dynamic linker binds
// every library at start-up, so the server runs itself again once with it,
// and takes it out of the environment its children's tools see. harvest-logs
// starts it with both variables set, which saves that second start-up.
void bindEveryLibraryNow(char **argv) {
  constexpr const char *Marker = "MLGO_COMPILE_SERVER_BOUND";
  if (std::getenv(Marker)) {
    ::unsetenv(Marker);
    ::unsetenv("LD_BIND_NOW");
    return;
  }
  if (std::getenv("LD_BIND_NOW"))
    return; // bound already, by whoever set it
  ::setenv("LD_BIND_NOW", "1", 1);
  ::setenv(Marker, "1", 1);
  // By its own path, so that it keeps its name (ps, pkill; not "exe").
  char self[4096];
  ssize_t length = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length > 0) {
    self[length] = '\0';
    ::execv(self, argv);
  }
  ::unsetenv(Marker); // no /proc: lazily bound, and slower
  ::unsetenv("LD_BIND_NOW");
}

int main(int argc, char **argv) {
  std::vector<std::string> preload;
  std::string inlinerPolicy, tools = "opt,llc";
  unsigned privateCodeAfter = 8;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("usage: mlgo-compile-server [--tools=opt,llc|clang] [--preload=LIBRARY]... "
                  "[--inliner_policy=SPEC]\n\n"
                  "Serves harvest-logs' compile requests on stdin/stdout (docs/compile-server.md):\n"
                  "each request forks a child that runs opt, llc or clang's cc1 in-process.\n\n"
                  "  --tools=opt,llc       the tools it runs (libMLGOOptLlc.so beside it; the default)\n"
                  "  --tools=clang         clang's cc1 instead (libMLGOClangCc1.so; the two cannot share\n"
                  "                        a process: they register some of the same LLVM options)\n"
                  "  --preload=LIBRARY     load LIBRARY (the inliner or regalloc plugin) once, before any fork\n"
                  "  --private_code_after=N copy the libraries' code into private memory before\n"
                  "                        request N+1 (default 8; 0: before the first)\n"
                  "  --inliner_policy=SPEC make the preloaded inliner plugin's policy for SPEC once\n"
                  "                        (e.g. tflite:DIR: the model is loaded once, not per compile)\n\n"
                  "Environment: MLGO_COMPILE_SERVER_SHARED_CODE=1 keeps the libraries' code shared\n"
                  "(by default the server copies it into private memory so that children fault less).\n");
      return 0;
    }
    if (arg.rfind("--inliner_policy=", 0) == 0) {
      inlinerPolicy = arg.substr(std::strlen("--inliner_policy="));
      continue;
    }
    if (arg.rfind("--private_code_after=", 0) == 0) {
      const char *digits = arg.c_str() + std::strlen("--private_code_after=");
      char *end = nullptr;
      unsigned long n = std::strtoul(digits, &end, 10);
      if (end == digits || *end || n > 1000000) {
        std::fprintf(stderr, "mlgo-compile-server: %s is not a request count\n", arg.c_str());
        return 2;
      }
      privateCodeAfter = static_cast<unsigned>(n);
      continue;
    }
    if (arg == "--tools=opt,llc" || arg == "--tools=clang") {
      tools = arg.substr(std::strlen("--tools="));
      continue;
    }
    if (arg.rfind("--preload=", 0) == 0) {
      preload.push_back(arg.substr(std::strlen("--preload=")));
      continue;
    }
    std::fprintf(stderr, "mlgo-compile-server: unknown argument %s (see --help)\n", arg.c_str());
    return 2;
  }
  if (::isatty(0)) {
    std::fprintf(stderr, "mlgo-compile-server: harvest-logs starts this server; it reads requests from a pipe\n");
    return 2;
  }
  bindEveryLibraryNow(argv);
  std::string self = llvm::sys::fs::getMainExecutable(argv[0], reinterpret_cast<void *>(&bindEveryLibraryNow));
  std::string toolLibrary =
      llvm::sys::path::parent_path(self).str() + (tools == "clang" ? "/libMLGOClangCc1.so" : "/libMLGOOptLlc.so");
  if (!mlgo::server::warmUp(toolLibrary, preload, inlinerPolicy))
    return 1;
  // Private copies of the libraries' code (about 70 MB more resident
  // memory per server), so that children inherit it mapped; the variable
  // keeps it shared with every other process, at a higher cost per compile.
  // The copy costs about as much CPU as it saves in 8 compiles (~150 ms
  // against ~20 ms a compile), so it is made before the request after
  // those: a server that only greets (harvest-logs' probe) or serves a
  // handful never makes it.
  const char *shared = std::getenv("MLGO_COMPILE_SERVER_SHARED_CODE");
  bool privateCode = !shared || std::strcmp(shared, "1") != 0;
  return mlgo::server::serve(0, 1, [privateCode, privateCodeAfter](unsigned served) {
    if (privateCode && served == privateCodeAfter)
      mlgo::server::moveLibraryCodeToAnonymousMemory({"libLLVM", "libstdc++", "libMLGOOptLlc", "libMLGOClangCc1",
                                                      "libMLGOInlineAdvisor", "libMLGORegAllocAdvisor",
                                                      "libclang-cpp"});
  });
}
