#include "RegAllocScoreBinding.h"

#include <cstddef>

// Both functions are exported by libLLVM (nm -D: T, LLVM_22.1) but declared
// only in the uninstalled RegAllocScore.h. They are bound by their mangled
// names, with the ABI facts that make that exact on x86-64 SysV: the score is
// a class of six doubles (48 bytes, so of MEMORY class) that
// calculateRegAllocScore returns through a hidden pointer in the first
// argument register, and getScore is a const member taking `this` there.
// A larger buffer than the class stands in for it; nothing reads its layout.
extern "C" {
void *mlgoCalculateRegAllocScoreInto(
    void *result, const llvm::MachineFunction &MF,
    const llvm::MachineBlockFrequencyInfo
        &MBFI) __asm__("_ZN4llvm22calculateRegAllocScoreERKNS_15MachineFunctionERKNS_25MachineBlockFrequencyInfoE");
double mlgoRegAllocScoreGetScore(const void *score) __asm__("_ZNK4llvm13RegAllocScore8getScoreEv");
}

#if !defined(__x86_64__)
#error "RegAllocScoreBinding relies on the x86-64 SysV return convention"
#endif

namespace mlgo {

double regAllocScore(const llvm::MachineFunction &MF, const llvm::MachineBlockFrequencyInfo &MBFI) {
  alignas(std::max_align_t) unsigned char score[256] = {};
  mlgoCalculateRegAllocScoreInto(score, MF, MBFI);
  return mlgoRegAllocScoreGetScore(score);
}

} // namespace mlgo
