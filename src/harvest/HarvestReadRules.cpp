#include "mlgo/harvest/HarvestReadRules.h"
#include "mlgo/compile/CompileConfinement.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace mlgo {

ReadExecRules harvestReadExecRules(const HarvestOptions &o) {
  ReadExecRules rules;
  switch (o.Compiler.Kind) {
  case CompilerKind::Opt:
    allowToolchain(rules, o.Compiler.Opt);
    allowToolchain(rules, o.Compiler.Llc);
    break;
  case CompilerKind::Llc:
    allowToolchain(rules, o.Compiler.Llc);
    break;
  case CompilerKind::Clang:
    allowToolchain(rules, o.Compiler.Clang);
    break;
  }
  allowSystemLibraries(rules);
  // The compile server and the tool libraries it loads from beside itself,
  // whose code its children run: the symbolizer of a crash's stack dump
  // reads them, as it reads an exec'd tool's in the toolchain.
  if (o.UseCompileServer && !o.CompileServerPath.empty()) {
    std::string dir = llvm::sys::path::parent_path(o.CompileServerPath).str();
    for (std::string file :
         {o.CompileServerPath, joinPath(dir, "libMLGOOptLlc.so"), joinPath(dir, "libMLGOClangCc1.so")})
      if (llvm::SmallString<256> real; !llvm::sys::fs::real_path(file, real))
        allowReading(rules, llvm::sys::path::parent_path(real));
  }
  // What the harvest itself hands the compiler.
  if (o.Mode == AdvisorMode::Plugin)
    allowReading(rules, o.PluginPath);
  if (!o.Policy.ModelDir.empty())
    allowReading(rules, o.Policy.ModelDir);
  if (!o.IR2VecVocab.empty())
    allowReading(rules, o.IR2VecVocab);
  for (const std::string &dir : o.CompilerReadableDirs)
    allowReading(rules, dir);
  return rules;
}

} // namespace mlgo
