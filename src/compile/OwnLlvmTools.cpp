#include "mlgo/compile/OwnLlvmTools.h"

#include "mlgo/support/PathUtil.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#ifndef MLGO_LLVM_TOOLS_DIR
#error "MLGO_LLVM_TOOLS_DIR: the bin directory of the LLVM we link (set by src/CMakeLists.txt)"
#endif

namespace mlgo {

std::string resolvedProgram(const std::string &program) {
  std::string path = program;
  if (program.find('/') == std::string::npos) {
    auto found = llvm::sys::findProgramByName(program);
    if (!found)
      return "";
    path = *found;
  }
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(path, real))
    return "";
  return real.str().str();
}

bool isOwnLlvmTool(const std::string &program, const char *tool) {
  std::string theirs = resolvedProgram(program);
  return !theirs.empty() && theirs == resolvedProgram(joinPath(MLGO_LLVM_TOOLS_DIR, tool));
}

std::string ownLlvmTool(const char *tool) { return resolvedProgram(joinPath(MLGO_LLVM_TOOLS_DIR, tool)); }

std::string whyNotOwnLlvmTool(const std::string &flag, const std::string &program, const char *tool) {
  std::string ours = resolvedProgram(joinPath(MLGO_LLVM_TOOLS_DIR, tool));
  std::string theirs = resolvedProgram(program);
  if (theirs.empty())
    return "--" + flag + "=" + program + " is not found";
  if (theirs != ours)
    return "--" + flag + "=" + program + " runs " + theirs +
           ", not the LLVM " LLVM_VERSION_STRING " the compile server is built with (" +
           (ours.empty() ? joinPath(MLGO_LLVM_TOOLS_DIR, tool) : ours) + ")";
  return "";
}

} // namespace mlgo
