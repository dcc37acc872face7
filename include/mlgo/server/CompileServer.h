// mlgo-compile-server's side of the protocol (CompileServerProtocol.h): a
// single-threaded process that has paid LLVM's start-up once (libraries
// relocated, static constructors run, targets and passes initialised, the
// inliner plugin loaded) and forks one child per compile, which runs the
// tool's own entry point in-process on the exec path's argv.
//
// The child must be the harvester's child, so that the harvester reaps it,
// times it out and kills its process group exactly as an exec'd compiler:
// the server forks an intermediate that forks the child and exits, and the
// harvester, a child subreaper (PR_SET_CHILD_SUBREAPER), adopts it. A
// server that dies therefore loses no compile already started.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace mlgo::server {

/// A tool's in-process entry: argv as the tool's main gets it; returns the
/// exit code.
using ToolEntry = int (*)(int argc, char **argv);

/// The entry for "opt", "llc" or "clang" in the tool library the server
/// loaded (libMLGOOptLlc.so or libMLGOClangCc1.so); nullptr when it has none.
ToolEntry toolEntry(const std::string &tool);

/// opt, then llc on the module opt leaves in memory: opt's argv, then llc's.
using OptThenLlcEntry = int (*)(int argc, char **argv, int llcArgc, char **llcArgv);

/// The entry for opt with a CodegenArgv (libMLGOOptLlc.so); nullptr when the
/// tool library has none.
OptThenLlcEntry optThenLlcEntry();

/// Start-up work done once, before the first fork: the tool library, targets,
/// passes, the libraries in `preload` (dlopen'ed for good) and, when
/// `inlinerPolicy` is set, the inliner plugin's policy for that spec (a
/// TFLite model loaded once). False (and said on stderr) when the tool
/// library cannot be loaded.
bool warmUp(const std::string &toolLibrary, const std::vector<std::string> &preload, const std::string &inlinerPolicy);

/// Moves the machine code of the loaded libraries whose file names start
/// with one of `libraryNames` into anonymous memory (src/server/AnonymousText.cpp:
/// the children then inherit its page tables instead of faulting it in).
/// Returns the bytes moved. Call once, single-threaded, before any fork.
size_t moveLibraryCodeToAnonymousMemory(const std::vector<std::string> &libraryNames);

/// Greets on `out`, then serves requests from `in` until end of file;
/// `beforeFork(n)` runs when request n (from 0) has arrived, before its fork.
/// Returns the process exit code.
int serve(int in, int out, const std::function<void(unsigned)> &beforeFork = {});

} // namespace mlgo::server
