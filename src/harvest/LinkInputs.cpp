#include "mlgo/harvest/LinkInputs.h"

#include "mlgo/harvest/CompileConfinement.h"
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
  if (llvm::isa<llvm::object::ELFObjectFileBase>(&file)) {
    for (const llvm::object::SectionRef &section : file.sections()) {
      uint32_t type = llvm::object::ELFSectionRef(section).getType();
      if (type == llvm::ELF::SHT_LLVM_DEPENDENT_LIBRARIES || type == llvm::ELF::SHT_LLVM_LINKER_OPTIONS)
        addSection(found, section);
    }
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
