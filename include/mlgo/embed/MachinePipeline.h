// A corpus module compiled in-process to the input of register allocation:
// the machine IR llc-22 -stop-before=greedy would print, handed to a visitor
// function by function (no llc is spawned and no MIR is printed or parsed).
#pragma once

#include "mlgo/embed/ModulePipeline.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace llvm {
class MachineFunction;
} // namespace llvm

namespace mlgo {

using MachineFunctionVisitor = llvm::function_ref<llvm::Error(const llvm::MachineFunction &)>;

/// Runs the codegen pipeline llc-22 runs with its defaults (target machine
/// from the module's triple, default CPU and features, -O2 codegen, the
/// target's data layout) on `loaded`'s module, up to but not including the
/// greedy register allocator, and calls `visit` on every machine function
/// there, in the order codegen runs (module order but on targets that require
/// callees first). Functions without a machine function (declarations,
/// available_externally) are not visited. The first error `visit` returns
/// stops the visits and is returned; LLVM's error diagnostics name the file.
llvm::Error compileToRegisterAllocation(LoadedModule &loaded, MachineFunctionVisitor visit);

} // namespace mlgo
