// mlgo-compile-server: started by harvest-logs (--compile_server), one per
// worker; forks a warm child per compile that runs opt or llc in-process
// (docs/compile-server.md). Not meant to be run by hand.
#include "mlgo/server/CompileServer.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

int main(int argc, char **argv) {
  std::vector<std::string> preload;
  std::string inlinerPolicy;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("usage: mlgo-compile-server [--preload=LIBRARY]... [--inliner_policy=SPEC]\n\n"
                  "Serves harvest-logs' compile requests on stdin/stdout (docs/compile-server.md):\n"
                  "each request forks a child that runs opt or llc in-process.\n\n"
                  "  --preload=LIBRARY     load LIBRARY (e.g. the inliner plugin) once, before any fork\n"
                  "  --inliner_policy=SPEC make the preloaded inliner plugin's policy for SPEC once\n"
                  "                        (e.g. tflite:DIR: the model is loaded once, not per compile)\n");
      return 0;
    }
    if (arg.rfind("--inliner_policy=", 0) == 0) {
      inlinerPolicy = arg.substr(std::strlen("--inliner_policy="));
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
  mlgo::server::warmUp(preload, inlinerPolicy);
  return mlgo::server::serve(0, 1);
}
