// The LLVM options a corpus' command line may set through -mllvm: a
// reviewed allow-list (docs/security.md). libLLVM 22 registers about 2,700
// options, and some of them run programs (-exec-on-ir-change=), start
// viewers, read or write files or load plugins; a word filter over their
// help texts missed several. Only the options below pass the screen.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlgo {

/// The reviewed names (without dashes or value), sorted. Each is an
/// optimisation, code generation, sanitizer or debug-info knob whose value
/// is a number, a switch, an enumerator or a symbol prefix: none names a
/// file, a directory or a program. Most are what clang-22's driver itself
/// passes on for some flag (-masm=intel, -mbranches-within-32B-boundaries,
/// -moutline, ...); the rest are tuning knobs real builds carry.
llvm::ArrayRef<llvm::StringRef> inertLlvmOptions();

/// Whether `name` (e.g. "inline-threshold") is on the list.
bool isInertLlvmOption(llvm::StringRef name);

} // namespace mlgo
