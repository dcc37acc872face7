#include "mlgo/evaluate/LinkInputs.h"

#include "mlgo/compile/CompileConfinement.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MachO.h"
#include "llvm/Object/COFF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/MachO.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <cstring>

namespace mlgo {
namespace {

// What a directive section names, quoted for a message: its NUL-separated
// strings, at most a few of them, each cut short.
std::string quoteStrings(llvm::StringRef bytes) {
  constexpr size_t MaxShown = 4, MaxLength = 80;
  llvm::SmallVector<llvm::StringRef> parts;
  bytes.split(parts, '\0', -1, /*KeepEmpty=*/false);
  std::string text;
  for (size_t i = 0; i < parts.size() && i < MaxShown; ++i) {
    std::string part = parts[i].take_front(MaxLength).str();
    for (char &c : part)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
        c = '?';
    text += (i ? ", '" : "'") + part + "'";
  }
  if (parts.size() > MaxShown)
    text += ", and " + std::to_string(parts.size() - MaxShown) + " more";
  return text;
}

void addSection(std::vector<std::string> &found, const llvm::object::SectionRef &section) {
  std::string name = "a section";
  if (auto n = section.getName())
    name = n->str();
  else
    llvm::consumeError(n.takeError());
  auto contents = section.getContents();
  if (!contents) {
    llvm::consumeError(contents.takeError());
    found.push_back(name);
    return;
  }
  found.push_back(name + ": " + quoteStrings(*contents));
}

} // namespace

llvm::Expected<std::vector<std::string>> linkDirectives(int fd, llvm::StringRef shown) {
  auto buffer = llvm::MemoryBuffer::getOpenFile(llvm::sys::fs::convertFDToNativeFile(fd), shown, /*FileSize=*/-1,
                                                /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: %s", shown.str().c_str(),
                                   buffer.getError().message().c_str());
  auto object = llvm::object::ObjectFile::createObjectFile((*buffer)->getMemBufferRef());
  if (!object)
    return llvm::createStringError("%s: %s", shown.str().c_str(), llvm::toString(object.takeError()).c_str());
  std::vector<std::string> found;
  const llvm::object::ObjectFile &file = **object;
  if (const auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&file)) {
    // A compile makes a relocatable object; anything else is not ours to link.
    if (elf->getEType() != llvm::ELF::ET_REL)
      found.push_back("not a relocatable object (ELF type " + std::to_string(elf->getEType()) + ")");
    for (const llvm::object::SectionRef &section : file.sections()) {
      uint32_t type = llvm::object::ELFSectionRef(section).getType();
      if (type == llvm::ELF::SHT_LLVM_DEPENDENT_LIBRARIES || type == llvm::ELF::SHT_LLVM_LINKER_OPTIONS) {
        addSection(found, section);
        continue;
      }
      // Code for a link-time compiler (GCC's LTO sections, a fat object's
      // bitcode): the linker would compile what the corpus put there, with
      // the options it chose, in place of the module's own code.
      auto name = section.getName();
      if (!name) {
        llvm::consumeError(name.takeError());
        continue;
      }
      if (name->starts_with(".gnu.lto_") || name->starts_with(".llvm.lto") || *name == ".llvm.offloading")
        found.push_back(name->str() + " (code for a link-time compiler)");
    }
    for (const llvm::object::SymbolRef &symbol : file.symbols())
      if (auto name = symbol.getName(); name && *name == "__gnu_lto_slim")
        found.push_back("__gnu_lto_slim (a GCC LTO object)");
      else if (!name)
        llvm::consumeError(name.takeError());
  } else if (llvm::isa<llvm::object::COFFObjectFile>(&file)) {
    for (const llvm::object::SectionRef &section : file.sections()) {
      auto name = section.getName();
      if (!name) {
        llvm::consumeError(name.takeError());
        continue;
      }
      if (*name == ".drectve")
        addSection(found, section);
    }
  } else if (const auto *macho = llvm::dyn_cast<llvm::object::MachOObjectFile>(&file)) {
    for (const auto &command : macho->load_commands())
      if (command.C.cmd == llvm::MachO::LC_LINKER_OPTION)
        found.push_back("LC_LINKER_OPTION");
  } else {
    return llvm::createStringError("%s: a %s object, which the link step cannot check for directives to its linker",
                                   shown.str().c_str(), file.getFileFormatName().str().c_str());
  }
  return found;
}

ReadExecRules linkReadExecRules(const LinkSettings &settings, const std::string &objectsDir,
                                const std::vector<std::string> &alsoReadable) {
  const std::string &linker = settings.Words.front();
  ReadExecRules rules = toolReadExecRules(linker);
  // A compiler driver runs the linker -fuse-ld= names (lld lies in its own
  // installation), or else the system's `ld`.
  llvm::StringRef program = llvm::sys::path::filename(linker);
  bool driver = program.contains("clang") || program.contains("gcc") || program.contains("g++") || program == "cc" ||
                program == "c++";
  if (driver) {
    std::string fuseLd;
    for (const std::string &word : settings.Words)
      if (llvm::StringRef(word).starts_with("-fuse-ld="))
        fuseLd = word.substr(strlen("-fuse-ld="));
    if (fuseLd.empty())
      allowToolchain(rules, "ld");
    else if (fuseLd.find('/') != std::string::npos)
      allowToolchain(rules, fuseLd);
    else if (fuseLd != "lld")
      allowToolchain(rules, "ld." + fuseLd);
  }
  // What a driver is told to run the linker from is the user's too.
  for (size_t i = 1; i < settings.Words.size(); ++i) {
    llvm::StringRef word = settings.Words[i];
    if (word.consume_front("--ld-path="))
      allowToolchain(rules, word.str());
    else if (word == "-B" && i + 1 < settings.Words.size())
      allowExecuting(rules, settings.Words[i + 1]);
    else if (word.consume_front("-B") && !word.empty())
      allowExecuting(rules, word);
  }
  // GNU ld reads these to find a shared library's dependencies, and a
  // driver searches LIBRARY_PATH for -l.
  allowReading(rules, "/etc/ld.so.conf");
  allowReading(rules, "/etc/ld.so.conf.d");
  if (const char *paths = std::getenv("LIBRARY_PATH")) {
    llvm::SmallVector<llvm::StringRef> dirs;
    llvm::StringRef(paths).split(dirs, ':', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef dir : dirs)
      allowReading(rules, dir);
  }
  allowReading(rules, objectsDir);
  for (const std::string &extra : settings.ExtraObjects)
    allowReading(rules, extra);
  // The template is the user's: what its words name may be read.
  for (size_t i = 1; i < settings.Words.size(); ++i) {
    llvm::StringRef word = settings.Words[i];
    llvm::SmallVector<llvm::StringRef> candidates{word};
    if (word.consume_front("-Wl,") || word.consume_front("-Xlinker,"))
      word.split(candidates, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef candidate : llvm::SmallVector<llvm::StringRef>(candidates)) {
      if (candidate.starts_with("@")) // a response file
        candidates.push_back(candidate.drop_front());
      if (auto eq = candidate.find('='); eq != llvm::StringRef::npos)
        candidates.push_back(candidate.substr(eq + 1));
      if (candidate.size() > 2 && (candidate.starts_with("-L") || candidate.starts_with("-T")))
        candidates.push_back(candidate.drop_front(2));
    }
    for (llvm::StringRef candidate : candidates)
      if (!candidate.empty() && candidate != "{objects}" && !candidate.contains("{output}") &&
          llvm::sys::fs::exists(candidate))
        allowReading(rules, candidate);
  }
  for (const std::string &dir : alsoReadable)
    allowReading(rules, dir);
  return rules;
}

} // namespace mlgo
