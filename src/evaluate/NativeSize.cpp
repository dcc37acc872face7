#include "mlgo/evaluate/NativeSize.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlgo {
namespace {

// Mapped, not read into memory: the file is what a compiler (or a linker)
// wrote, and a huge one (a sparse file costs nothing to make) must not
// become an allocation of its size. Its headers are all that is read.
llvm::Expected<llvm::object::OwningBinary<llvm::object::ObjectFile>> openObject(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  auto object = llvm::object::ObjectFile::createObjectFile((*buffer)->getMemBufferRef());
  if (!object)
    return llvm::createStringError("%s: %s", path.str().c_str(), llvm::toString(object.takeError()).c_str());
  // Only an object for a machine: zeros, for one, read as a COFF object of
  // no sections for no machine, of size 0.
  if ((*object)->getArch() == llvm::Triple::UnknownArch)
    return llvm::createStringError("%s: not an object file for a known architecture", path.str().c_str());
  return llvm::object::OwningBinary<llvm::object::ObjectFile>(std::move(*object), std::move(*buffer));
}

} // namespace

llvm::Expected<uint64_t> berkeleyTextSize(llvm::StringRef objectPath) {
  auto owner = openObject(objectPath);
  if (!owner)
    return owner.takeError();
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
  auto owner = openObject(path);
  if (!owner)
    return owner.takeError();
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
