#include "EvictionCandidateIndex.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/CodeGen/MachineRegisterInfo.h"
#include "llvm/CodeGen/RegisterClassInfo.h"
#include "llvm/CodeGen/TargetRegisterInfo.h"

#include <algorithm>

namespace mlgo {

int64_t evictionColumn(const AllocationState &state, llvm::Register virtReg, unsigned orderLimit,
                       llvm::MCRegister chosen) {
  if (!chosen)
    return EvictCandidateColumn;
  llvm::ArrayRef<llvm::MCPhysReg> order = state.RegClassInfo.getOrder(state.MRI.getRegClass(virtReg));
  llvm::SmallVector<llvm::MCPhysReg, 16> hints;
  bool hardHints = state.TRI.getRegAllocationHints(virtReg, order, hints, state.MF, state.VRM, state.Matrix);
  int64_t column = 0;
  for (llvm::MCPhysReg hint : hints) {
    if (hint == chosen.id())
      return column;
    ++column;
  }
  if (hardHints)
    return -1;
  size_t limit = orderLimit ? std::min<size_t>(orderLimit, order.size()) : order.size();
  for (size_t i = 0; i < limit; ++i) {
    if (llvm::is_contained(hints, order[i]))
      continue; // already walked as a hint
    if (order[i] == chosen.id())
      return column;
    ++column;
  }
  return -1;
}

} // namespace mlgo
