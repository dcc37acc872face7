// evaluate/: what a compile is worth (native sizes, the default's size per
// module and its cache, the regalloc reward, the link of objects); uses
// compile/, knows nothing of harvests.
// The native size ml-compiler-opt rewards: llvm-size's Berkeley "text"
// column, computed in-process.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace mlgo {

/// Sum of the sizes of the sections that are allocated and either executable
/// or read-only (.text, .rodata*, .eh_frame, ...), as llvm-size's Berkeley
/// format counts them.
llvm::Expected<uint64_t> berkeleyTextSize(llvm::StringRef objectPath);

/// All three columns of llvm-size's Berkeley format for an object or a
/// linked binary: text as above, data (allocated, writable, with contents),
/// bss (allocated without contents); allocated() is llvm-size's "dec".
struct BerkeleySizes {
  uint64_t Text = 0, Data = 0, Bss = 0;
  uint64_t allocated() const { return Text + Data + Bss; }
};
llvm::Expected<BerkeleySizes> berkeleySizes(llvm::StringRef path);

/// ml-compiler-opt's reward: 1 - (size + 0.01) / (baseline + 0.01).
double sizeReward(uint64_t size, uint64_t baseline);

} // namespace mlgo
