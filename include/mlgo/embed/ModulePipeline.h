// A corpus module read into a context of its own and, optionally, run
// through an opt pipeline in-process (with a target machine for its triple,
// as opt-22 -passes=... builds it): the input of mlgo-ir2vec's embeddings
// and triplets.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <utility>

namespace mlgo {

class LoadedModule {
public:
  /// Parses the bitcode at `path`; errors (and LLVM's diagnostics, which
  /// would otherwise end the process) name the file.
  static llvm::Expected<std::unique_ptr<LoadedModule>> load(llvm::StringRef path);
  /// load(), then runPipeline(passes) unless `passes` is empty.
  static llvm::Expected<std::unique_ptr<LoadedModule>> loadAfter(llvm::StringRef path, llvm::StringRef passes);
  /// Runs `passes` (opt's -passes= syntax, e.g. "default<O2>") on the module.
  llvm::Error runPipeline(llvm::StringRef passes);
  llvm::Module &module() { return *Module; }
  const std::string &path() const { return Path; }
  /// The error diagnostics collected so far, cleared.
  std::string takeDiagnostics() { return std::exchange(Diagnostics, std::string()); }
  ~LoadedModule();

private:
  LoadedModule() = default;
  std::string Path;
  std::string Diagnostics;
  llvm::LLVMContext Context;
  std::unique_ptr<llvm::Module> Module;
};

} // namespace mlgo
