#include "mlgo/compile/CompileConfinement.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <fstream>

namespace mlgo {

ReadExecRules withModuleInputs(ReadExecRules rules, const std::string &bitcode, const std::string &corpusDir) {
  std::string corpus = realPathOf(corpusDir);
  auto addInside = [&](const std::string &file) {
    std::string real = realPathOf(file);
    if (!corpus.empty() && llvm::StringRef(real).starts_with(corpus + "/"))
      addPathOnce(rules.Readable, real);
  };
  addInside(bitcode);
  // ml-compiler-opt's layout of a ThinLTO corpus: <module>.thinlto.bc beside
  // <module>.bc, named by the module's -fthinlto-index=.
  if (llvm::StringRef(bitcode).ends_with(".bc"))
    addInside(bitcode.substr(0, bitcode.size() - 3) + ".thinlto.bc");
  return rules;
}

std::vector<std::string> unreadableInputs(const std::vector<std::string> &commandLine, const ReadExecRules &rules,
                                          const std::vector<std::string> &writable) {
  std::vector<std::string> allowed;
  for (const std::vector<std::string> *list : {&rules.Readable, &rules.Executable, &writable})
    for (const std::string &path : *list)
      addPathOnce(allowed, realPathOf(path));
  auto readable = [&](llvm::StringRef real) {
    for (const std::string &a : allowed)
      if (real == a || (real.starts_with(a) && (a == "/" || real[a.size()] == '/')))
        return true;
    return false;
  };
  std::vector<std::string> outside;
  for (const std::string &arg : commandLine) {
    llvm::StringRef value = arg;
    if (value.starts_with("-")) {
      size_t eq = value.find('=');
      if (eq == llvm::StringRef::npos)
        continue;
      value = value.drop_front(eq + 1);
    }
    // Files only: a directory in a line (-fdebug-compilation-dir=, -I) is
    // text to the compile of a module's bitcode, never read.
    std::string real = value.empty() || !llvm::sys::fs::is_regular_file(value) ? "" : realPathOf(value);
    if (!real.empty() && !readable(real))
      addPathOnce(outside, value.str());
  }
  return outside;
}

void explainUnreadableInputs(CompileOutcome &outcome, const std::vector<std::string> &commandLine,
                             const CompileJob &job) {
  if (outcome.Result != CompileOutcome::Status::Failed || outcome.Reason != "compiler_failed" || !job.ReadExec ||
      job.WorkDir.empty() || landlockSupport().Abi < 1)
    return;
  std::vector<std::string> outside = unreadableInputs(commandLine, *job.ReadExec, job.AlsoWritable);
  if (outside.empty())
    return;
  std::string names;
  for (const std::string &path : outside)
    names += (names.empty() ? "" : ", ") + path;
  outcome.Detail += (outcome.Detail.empty() ? "" : "; ") + std::string("its command line names ") + names +
                    ", which compiles may not read (Landlock): allow its directory with --compiler_readable_dir "
                    "(docs/security.md)";
}

} // namespace mlgo
