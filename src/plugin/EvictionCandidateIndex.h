// The column LLVM's ML eviction advisor gives a physical register: its
// position in the allocation order. AllocationOrder.h is not installed, so the
// order is rebuilt from public APIs; the plugin checks every answer against
// the ML advisor itself (RegAllocAdvisorPlugin.cpp).
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/CodeGen/Register.h"
#include "llvm/MC/MCRegister.h"

#include <cstdint>

namespace llvm {
class LiveRegMatrix;
class MachineFunction;
class MachineRegisterInfo;
class RegisterClassInfo;
class TargetRegisterInfo;
class VirtRegMap;
} // namespace llvm

namespace mlgo {

/// Column of "evict nothing" (the candidate itself): the last of 33.
constexpr int64_t EvictCandidateColumn = 32;

struct AllocationState {
  const llvm::MachineFunction &MF;
  const llvm::MachineRegisterInfo &MRI;
  const llvm::TargetRegisterInfo &TRI;
  const llvm::RegisterClassInfo &RegClassInfo;
  const llvm::VirtRegMap *VRM;
  const llvm::LiveRegMatrix *Matrix;
};

/// The column of `chosen` among the first `orderLimit` registers (0: all) of
/// `virtReg`'s allocation order: its hints first, then its class order without
/// them (only the hints when they are hard). EvictCandidateColumn for no
/// register; -1 when `chosen` is not in that walk.
int64_t evictionColumn(const AllocationState &state, llvm::Register virtReg, unsigned orderLimit,
                       llvm::MCRegister chosen);

} // namespace mlgo
