#include "mlgo/corpus/BitcodeCheck.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBufferRef.h"

namespace mlgo {

bool hasBitcodeMagic(llvm::StringRef bytes) {
  return bytes.starts_with("BC\xC0\xDE") || bytes.starts_with("\xDE\xC0\x17\x0B");
}

llvm::Error checkBitcode(llvm::StringRef bytes) {
  if (bytes.empty())
    return llvm::createStringError("empty: 0 bytes of bitcode");
  if (!hasBitcodeMagic(bytes))
    return llvm::createStringError("not bitcode: no BC C0 DE or wrapper magic");
  auto modules = llvm::getBitcodeModuleList(llvm::MemoryBufferRef(bytes, "<embedded bitcode>"));
  if (!modules)
    return llvm::createStringError("invalid bitcode: %s", llvm::toString(modules.takeError()).c_str());
  if (modules->empty())
    return llvm::createStringError("invalid bitcode: it holds no module");
  return llvm::Error::success();
}

llvm::Expected<std::string> bitcodeSourceFileName(llvm::StringRef bytes) {
  auto modules = llvm::getBitcodeModuleList(llvm::MemoryBufferRef(bytes, "<bitcode>"));
  if (!modules)
    return modules.takeError();
  if (modules->empty())
    return llvm::createStringError("the bitcode holds no module");
  llvm::LLVMContext context;
  // Lazily: module-level records only, no function body.
  auto lazy = modules->front().getLazyModule(context, /*ShouldLazyLoadMetadata=*/true, /*IsImporting=*/false);
  if (!lazy)
    return lazy.takeError();
  return (*lazy)->getSourceFileName();
}

llvm::Expected<std::vector<std::string>> linkerDirectives(llvm::StringRef bytes) {
  auto modules = llvm::getBitcodeModuleList(llvm::MemoryBufferRef(bytes, "<bitcode>"));
  if (!modules)
    return modules.takeError();
  std::vector<std::string> found;
  for (llvm::BitcodeModule &module : *modules) {
    llvm::LLVMContext context;
    // Lazily: the module-level metadata is read, no function body.
    auto lazy = module.getLazyModule(context, /*ShouldLazyLoadMetadata=*/false, /*IsImporting=*/false);
    if (!lazy)
      return lazy.takeError();
    if (llvm::Error e = (*lazy)->materializeMetadata())
      return std::move(e);
    for (const char *name : {"llvm.dependent-libraries", "llvm.linker.options"}) {
      const llvm::NamedMDNode *node = (*lazy)->getNamedMetadata(name);
      if (!node || node->getNumOperands() == 0)
        continue;
      std::string list;
      constexpr unsigned MaxShown = 4;
      for (unsigned i = 0; i < node->getNumOperands() && i < MaxShown; ++i)
        for (const llvm::MDOperand &operand : node->getOperand(i)->operands())
          if (const auto *text = llvm::dyn_cast_or_null<llvm::MDString>(operand.get()))
            list += (list.empty() ? "'" : ", '") + text->getString().take_front(80).str() + "'";
      if (node->getNumOperands() > MaxShown)
        list += ", and " + std::to_string(node->getNumOperands() - MaxShown) + " more";
      found.push_back(std::string("!") + name + " (" + list + ")");
    }
    // The same sections, or a link-time compiler's, written as module asm.
    llvm::StringRef assembly = (*lazy)->getModuleInlineAsm();
    for (const char *marker : {"llvm_dependent_libraries", "llvm_linker_options", ".deplibs", ".linker-options",
                               ".gnu.lto_", ".llvm.lto", "__gnu_lto_slim"})
      if (assembly.contains(marker)) {
        found.push_back(std::string("module asm naming ") + marker);
        break;
      }
  }
  return found;
}

} // namespace mlgo
