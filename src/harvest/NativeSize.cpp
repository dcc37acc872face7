#include "mlgo/harvest/NativeSize.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"

namespace mlgo {

llvm::Expected<uint64_t> berkeleyTextSize(llvm::StringRef objectPath) {
  auto owner = llvm::object::ObjectFile::createObjectFile(objectPath);
  if (!owner)
    return llvm::createStringError("%s: %s", objectPath.str().c_str(), llvm::toString(owner.takeError()).c_str());
  const llvm::object::ObjectFile &object = *owner->getBinary();
  uint64_t text = 0;
  for (const llvm::object::SectionRef &section : object.sections()) {
    if (const auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&object)) {
      (void)elf;
      uint64_t flags = llvm::object::ELFSectionRef(section).getFlags();
      if ((flags & llvm::ELF::SHF_ALLOC) && ((flags & llvm::ELF::SHF_EXECINSTR) || !(flags & llvm::ELF::SHF_WRITE)))
        text += section.getSize();
    } else if (section.isText() || (section.isData() && !section.isBSS())) {
      text += section.isText() ? section.getSize() : 0;
    }
  }
  return text;
}

llvm::Expected<BerkeleySizes> berkeleySizes(llvm::StringRef path) {
  auto owner = llvm::object::ObjectFile::createObjectFile(path);
  if (!owner)
    return llvm::createStringError("%s: %s", path.str().c_str(), llvm::toString(owner.takeError()).c_str());
  BerkeleySizes sizes;
  // llvm-size's own classification, section by section.
  for (const llvm::object::SectionRef &section : owner->getBinary()->sections()) {
    if (section.isBerkeleyText())
      sizes.Text += section.getSize();
    else if (section.isBerkeleyData())
      sizes.Data += section.getSize();
    else if (section.isBSS())
      sizes.Bss += section.getSize();
  }
  return sizes;
}

double sizeReward(uint64_t size, uint64_t baseline) {
  return 1.0 - (static_cast<double>(size) + 0.01) / (static_cast<double>(baseline) + 0.01);
}

} // namespace mlgo
