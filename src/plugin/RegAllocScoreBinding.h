// LLVM's own register-allocation score (RegAllocScore, the reward its
// development mode logs), reached through libLLVM's exported symbols: the
// declaring header, RegAllocScore.h, is not installed.
#pragma once

namespace llvm {
class MachineBlockFrequencyInfo;
class MachineFunction;
} // namespace llvm

namespace mlgo {

/// calculateRegAllocScore(MF, MBFI).getScore(): the weighted count of copies,
/// loads, stores and rematerializations, each by its block's frequency.
double regAllocScore(const llvm::MachineFunction &MF, const llvm::MachineBlockFrequencyInfo &MBFI);

} // namespace mlgo
