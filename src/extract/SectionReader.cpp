#include "mlgo/extract/SectionReader.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/MachO.h"

namespace mlgo {

llvm::Expected<std::optional<llvm::StringRef>> findSectionContents(const llvm::object::ObjectFile &object,
                                                                   llvm::StringRef name) {
  const auto *macho = llvm::dyn_cast<llvm::object::MachOObjectFile>(&object);
  for (const llvm::object::SectionRef &section : object.sections()) {
    llvm::Expected<llvm::StringRef> sectionName = section.getName();
    if (!sectionName) {
      llvm::consumeError(sectionName.takeError());
      continue;
    }
    if (macho) {
      llvm::StringRef segment = macho->getSectionFinalSegmentName(section.getRawDataRefImpl());
      if (name != (segment + "," + *sectionName).str())
        continue;
    } else if (*sectionName != name) {
      continue;
    }
    if (llvm::isa<llvm::object::ELFObjectFileBase>(&object) &&
        llvm::object::ELFSectionRef(section).getType() == llvm::ELF::SHT_NOBITS)
      return llvm::createStringError("section '%s' has no contents", name.str().c_str());
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents)
      return llvm::createStringError("section '%s' cannot be read: %s", name.str().c_str(),
                                     llvm::toString(contents.takeError()).c_str());
    return std::optional<llvm::StringRef>(*contents);
  }
  return std::optional<llvm::StringRef>();
}

EmbeddedSectionNames nativeSectionNames(const llvm::object::ObjectFile &object) {
  if (object.isMachO())
    return {"__LLVM,__bitcode", "__LLVM,__cmdline"};
  return {".llvmbc", ".llvmcmd"};
}

} // namespace mlgo
