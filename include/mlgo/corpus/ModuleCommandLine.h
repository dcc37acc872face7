// The rules for a corpus module's compiler command line (its `.cmd`, or the
// corpus' global_command_override) before harvest-logs hands it to clang:
// the flags every harvest drops, and the screening of flags that load code
// or write files (docs/security.md). Used by harvest-logs and validate-corpus.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlgo {

/// What a clang option does, for screening. Every cc1 option of clang-22
/// that takes a file, path, directory or plugin is classified (the unit test
/// CommandLineScreen.EveryFileTakingCc1OptionIsClassified walks the table).
enum class FlagClass {
  LoadsCode,   // dlopens a plugin or names one to run: refused
  WritesFile,  // writes a file other than the object we ask for: refused
  CopiesFile,  // puts a file's code or bytes into the object (links or embeds it): refused
  DriverSetup, // the driver reads its options or programs from elsewhere: refused
  Dropped,     // a side output ordinary builds carry, removed before the compile
  ReadsInput,  // reads a file (headers, profiles, lists): allowed
  Text,        // a path that is only text (embedded, or for a program at run time): allowed
  Ours,        // an option harvest-logs sets itself, later on the line (the last wins): allowed
};

struct FlagRule {
  const char *Name; // the canonical option's prefixed name, e.g. "-stats-file="
  FlagClass Class;
};

/// The classification, keyed by the canonical (unaliased) option name.
llvm::ArrayRef<FlagRule> commandLineFlagRules();

/// The corpus' command line as clang is to get it: the dropped flags
/// (FlagClass::Dropped, with their values) removed, everything else in order.
/// Parsed with clang-22's own option table, so joined, separate and aliased
/// spellings are all recognised. A line that does not start with -cc1 is a
/// driver command line (global_command_override) and parsed as one.
std::vector<std::string> dropHarvestFlags(llvm::ArrayRef<std::string> args);

/// Why `args` may not be run without --trust_corpus_commands: the first
/// argument that starts with '@' (a response file), or flag that loads code,
/// writes a file, copies one into the object, sets up the driver, is not a
/// clang option, or an -mllvm option off the reviewed list
/// (InertLlvmOptions.h). std::nullopt when the line is safe.
std::optional<std::string> unsafeCommandLineFlag(llvm::ArrayRef<std::string> args);

/// Every reason unsafeCommandLineFlag could give for `args`, in order (each
/// response file, refused flag and -mllvm option off the list once), so
/// that a report names them all.
std::vector<std::string> unsafeCommandLineFlags(llvm::ArrayRef<std::string> args);

/// Why an LLVM option given through -mllvm is unsafe, or std::nullopt: only
/// the reviewed inert options pass. `value` is the -mllvm argument, e.g.
/// "-inline-threshold=100".
std::optional<std::string> unsafeLlvmOption(llvm::StringRef value);

/// A command line refused by the screening (journal reason unsafe_command_line).
class UnsafeCommandLineError : public llvm::ErrorInfo<UnsafeCommandLineError> {
public:
  static char ID;
  UnsafeCommandLineError(std::string source, std::string flag) : Source(std::move(source)), Flag(std::move(flag)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  std::string Source, Flag;
};

/// UnsafeCommandLineError naming every flag unsafeCommandLineFlags finds in `args`
/// (`source` names where they come from: a .cmd file, global_command_override).
llvm::Error screenCommandLine(llvm::ArrayRef<std::string> args, llvm::StringRef source);

/// The line harvest-logs runs for a corpus' line `args` (dropHarvestFlags
/// applied), screened: a cc1 line as it is; a driver line as the one cc1 job
/// clang-22's driver (`clangPath`) makes of it for compiling `input` with -c
/// (DriverJob.h), screened again. UnsafeCommandLineError otherwise, naming
/// `source`. validate-corpus gives the same verdict through it.
llvm::Expected<std::vector<std::string>> screenedCompileLine(llvm::ArrayRef<std::string> args, llvm::StringRef source,
                                                             llvm::StringRef clangPath, llvm::StringRef input);

/// Reads <name>.cmd: NUL-separated, the trailing empty field dropped, and
/// dropHarvestFlags applied.
llvm::Expected<std::vector<std::string>> readModuleCommandLine(llvm::StringRef cmdPath);

} // namespace mlgo
