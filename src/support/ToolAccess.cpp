#include "mlgo/support/ToolAccess.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <fstream>

namespace mlgo {

void addPathOnce(std::vector<std::string> &list, std::string path) {
  if (!path.empty() && std::find(list.begin(), list.end(), path) == list.end())
    list.push_back(std::move(path));
}

std::string realPathOf(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(path, real))
    return "";
  return real.str().str();
}

namespace {

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
  addPathOnce(rules.Executable, prefix);
  // A wrapper script runs through its interpreter, which must be executable
  // too (e.g. /bin/sh: /usr); what the wrapper runs must lie there or in the
  // compiler's installation.
  auto found = llvm::sys::findProgramByName(program);
  if (found)
    if (std::string interpreter = scriptInterpreter(*found); !interpreter.empty())
      addPathOnce(rules.Executable, toolchainPrefix(interpreter));
}

// Every dynamically linked compiler needs these (strace -f -e trace=%file of
// opt-22, llc-22 and clang-22, cc1 and driver lines): the loader, executed by
// the kernel at exec (so EXECUTE), and the libraries it maps and the cache it
// finds them with (READ_FILE: mapping a library executable needs no more).
// /lib, /lib64 and /usr/lib64 are the same directories on a merged /usr,
// distinct on others; missing ones are left out.
void addSystem(ReadExecRules &rules) {
#if defined(__x86_64__)
  addPathOnce(rules.Executable, realPathOf("/lib64/ld-linux-x86-64.so.2"));
#elif defined(__aarch64__)
  addPathOnce(rules.Executable, realPathOf("/lib/ld-linux-aarch64.so.1"));
#endif
  for (const char *libraries : {"/usr/lib", "/lib", "/lib64", "/usr/lib64", "/etc/ld.so.cache"})
    addPathOnce(rules.Readable, realPathOf(libraries));
}

} // namespace

std::string toolchainPrefix(llvm::StringRef program) {
  auto found = llvm::sys::findProgramByName(program);
  if (!found)
    return "";
  std::string real = realPathOf(*found);
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

void allowReading(ReadExecRules &rules, llvm::StringRef path) { addPathOnce(rules.Readable, realPathOf(path)); }

void allowToolchain(ReadExecRules &rules, const std::string &program) { addToolchain(rules, program); }

void allowExecuting(ReadExecRules &rules, llvm::StringRef path) { addPathOnce(rules.Executable, realPathOf(path)); }

void allowSystemLibraries(ReadExecRules &rules) { addSystem(rules); }

} // namespace mlgo
