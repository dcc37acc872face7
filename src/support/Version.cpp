#include "mlgo/support/Version.h"

#include "mlgo/support/VersionInfo.inc" // MLGO_GIT_REVISION, rewritten at build time

#include <llvm/Config/llvm-config.h>

namespace mlgo {

const char *projectVersion() { return MLGO_PROJECT_VERSION; }

const char *gitRevision() { return MLGO_GIT_REVISION; }

const char *llvmVersion() { return LLVM_VERSION_STRING; }

std::string versionString() {
  std::string s = std::string("mlgo-corpus ") + projectVersion() + " (";
  if (*gitRevision())
    s += std::string("git ") + gitRevision() + ", ";
  return s + "LLVM " + llvmVersion() + ")";
}

std::string versionText(const std::string &tool, const std::vector<std::string> &extraLines) {
  std::string text = "mlgo-corpus:\n";
  text += "  " + tool + " version " + projectVersion() + "\n";
  text += std::string("  Git revision: ") + (*gitRevision() ? gitRevision() : "unknown") + "\n";
  text += std::string("  Built against LLVM version ") + llvmVersion() + "\n";
  for (const std::string &line : extraLines)
    text += "  " + line + "\n";
  return text;
}

} // namespace mlgo
