#include "mlgo/harvest/CompileConfinement.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <fstream>

namespace mlgo {
namespace {

void addOnce(std::vector<std::string> &list, std::string path) {
  if (!path.empty() && std::find(list.begin(), list.end(), path) == list.end())
    list.push_back(std::move(path));
}

std::string realPath(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(path, real))
    return "";
  return real.str().str();
}

// The program a script names on its #! line ("" for anything else).
std::string scriptInterpreter(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line) || line.rfind("#!", 0) != 0)
    return "";
  llvm::StringRef rest = llvm::StringRef(line).drop_front(2).trim();
  return rest.take_until([](char c) { return c == ' ' || c == '\t'; }).str();
}

void addToolchain(ReadExecRules &rules, const std::string &program) {
  std::string prefix = toolchainPrefix(program);
  addOnce(rules.Executable, prefix);
  // A wrapper script runs through its interpreter, which must be executable
  // too (e.g. /bin/sh: /usr); what the wrapper runs must lie there or in the
  // compiler's installation.
  auto found = llvm::sys::findProgramByName(program);
  if (found)
    if (std::string interpreter = scriptInterpreter(*found); !interpreter.empty())
      addOnce(rules.Executable, toolchainPrefix(interpreter));
}

// Every dynamically linked compiler needs these (strace -f -e trace=%file of
// opt-22, llc-22 and clang-22, cc1 and driver lines): the loader, executed by
// the kernel at exec (so EXECUTE), and the libraries it maps and the cache it
// finds them with (READ_FILE: mapping a library executable needs no more).
// /lib, /lib64 and /usr/lib64 are the same directories on a merged /usr,
// distinct on others; missing ones are left out.
void addSystem(ReadExecRules &rules) {
#if defined(__x86_64__)
  addOnce(rules.Executable, realPath("/lib64/ld-linux-x86-64.so.2"));
#elif defined(__aarch64__)
  addOnce(rules.Executable, realPath("/lib/ld-linux-aarch64.so.1"));
#endif
  for (const char *libraries : {"/usr/lib", "/lib", "/lib64", "/usr/lib64", "/etc/ld.so.cache"})
    addOnce(rules.Readable, realPath(libraries));
}

} // namespace

std::string toolchainPrefix(llvm::StringRef program) {
  auto found = llvm::sys::findProgramByName(program);
  if (!found)
    return "";
  std::string real = realPath(*found);
  if (real.empty())
    return "";
  llvm::StringRef dir = llvm::sys::path::parent_path(real);
  llvm::StringRef prefix = llvm::sys::path::parent_path(dir);
  // Never the root: /bin/sh on a system without a merged /usr is /bin's.
  if (llvm::sys::path::filename(dir) == "bin" && !prefix.empty() && prefix != "/")
    return prefix.str();
  return dir.str();
}

ReadExecRules toolReadExecRules(const std::string &program) {
  ReadExecRules rules;
  addToolchain(rules, program);
  addSystem(rules);
  return rules;
}

void allowReading(ReadExecRules &rules, llvm::StringRef path) { addOnce(rules.Readable, realPath(path)); }

void allowToolchain(ReadExecRules &rules, const std::string &program) { addToolchain(rules, program); }

void allowExecuting(ReadExecRules &rules, llvm::StringRef path) { addOnce(rules.Executable, realPath(path)); }

ReadExecRules harvestReadExecRules(const HarvestOptions &o) {
  ReadExecRules rules;
  switch (o.Compiler.Kind) {
  case CompilerKind::Opt:
    addToolchain(rules, o.Compiler.Opt);
    addToolchain(rules, o.Compiler.Llc);
    break;
  case CompilerKind::Llc:
    addToolchain(rules, o.Compiler.Llc);
    break;
  case CompilerKind::Clang:
    addToolchain(rules, o.Compiler.Clang);
    break;
  }
  addSystem(rules);
  // The compile server and the tool libraries it loads from beside itself,
  // whose code its children run: the symbolizer of a crash's stack dump
  // reads them, as it reads an exec'd tool's in the toolchain.
  if (o.UseCompileServer && !o.CompileServerPath.empty()) {
    std::string dir = llvm::sys::path::parent_path(o.CompileServerPath).str();
    for (std::string file :
         {o.CompileServerPath, joinPath(dir, "libMLGOOptLlc.so"), joinPath(dir, "libMLGOClangCc1.so")})
      if (std::string real = realPath(file); !real.empty())
        addOnce(rules.Readable, llvm::sys::path::parent_path(real).str());
  }
  // What the harvest itself hands the compiler.
  if (o.Mode == AdvisorMode::Plugin)
    addOnce(rules.Readable, realPath(o.PluginPath));
  if (!o.Policy.ModelDir.empty())
    addOnce(rules.Readable, realPath(o.Policy.ModelDir));
  if (!o.IR2VecVocab.empty())
    addOnce(rules.Readable, realPath(o.IR2VecVocab));
  for (const std::string &dir : o.CompilerReadableDirs)
    addOnce(rules.Readable, realPath(dir));
  return rules;
}

ReadExecRules withModuleInputs(ReadExecRules rules, const std::string &bitcode, const std::string &corpusDir) {
  std::string corpus = realPath(corpusDir);
  auto addInside = [&](const std::string &file) {
    std::string real = realPath(file);
    if (!corpus.empty() && llvm::StringRef(real).starts_with(corpus + "/"))
      addOnce(rules.Readable, real);
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
      addOnce(allowed, realPath(path));
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
    std::string real = value.empty() || !llvm::sys::fs::is_regular_file(value) ? "" : realPath(value);
    if (!real.empty() && !readable(real))
      addOnce(outside, value.str());
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
