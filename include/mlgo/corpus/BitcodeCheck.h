// The check every extracted module passes before it is written.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlgo {

/// Succeeds when `bytes` is LLVM bitcode (raw or wrapped) whose module list
/// parses: the cheap structural check of BitReader, without materialising
/// any function.
llvm::Error checkBitcode(llvm::StringRef bytes);

/// True when `bytes` starts with the raw (BC C0 DE) or wrapper (DE C0 17 0B)
/// bitcode magic.
bool hasBitcodeMagic(llvm::StringRef bytes);

} // namespace mlgo
