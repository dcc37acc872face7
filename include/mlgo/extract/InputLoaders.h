// Input loaders: each turns one kind of build description into candidates.
// A whole-job problem (unreadable or malformed file) is an Error naming the
// file; a bad entry is a SkippedEntry and the rest goes on.
#pragma once

#include "mlgo/extract/ObjectCandidate.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlgo {

/// compile_commands.json: each entry's object, relative to its `directory`.
llvm::Expected<LoadedInput> loadCompileCommands(llvm::StringRef path);

/// A linker params file, one argument per line; `@file` lines are expanded.
/// Objects are relative to `objBaseDir`.
llvm::Expected<LoadedInput> loadLinkerParams(llvm::StringRef path, llvm::StringRef objBaseDir);

/// The params rules applied to an argument list (bazel aquery's CppLink).
/// `origin` prefixes each candidate's origin.
llvm::Expected<LoadedInput> loadLinkerArguments(llvm::ArrayRef<std::string> args, llvm::StringRef objBaseDir,
                                                llvm::StringRef origin);

/// `bazel aquery --output=jsonproto`: the arguments of the last CppLink action.
llvm::Expected<LoadedInput> loadBazelAquery(llvm::StringRef path, llvm::StringRef objBaseDir);

/// Every `*.o` and `*.a` (static archive) below `dir`, in a sorted
/// depth-first walk.
llvm::Expected<LoadedInput> loadObjectDirectory(llvm::StringRef dir);

/// Linked binaries (executables, shared libraries): `path` itself, or every
/// file below the directory `path` (sorted walk) whose magic says it is an
/// ELF, Mach-O or PE executable or shared library. Each candidate is named by
/// its path relative to the directory (or its file name); its modules are
/// named below it.
llvm::Expected<LoadedInput> loadLinkedBinaries(llvm::StringRef path);

/// Local ThinLTO: every `<obj>.3.import.bc` below `objBaseDir` ("" = CWD),
/// proposing `<obj>`.
llvm::Expected<LoadedInput> loadLocalThinLTO(llvm::StringRef objBaseDir);

/// make-corpus: every `*.bc` file below `dir` (sorted walk), named by its
/// path without `.bc`. ThinLTO index files (`*.thinlto.bc`) and directories
/// are skipped entries.
llvm::Expected<LoadedInput> loadBitcodeDirectory(llvm::StringRef dir);

} // namespace mlgo
