// Machine IR oracles for the MIR2Vec tests: llc-22 -stop-before=greedy's MIR
// of a module, split into one MIR file per machine function, because
// llvm-ir2vec-22 --mode=mir reads every function's virtual registers in the
// first function's register info (wrong classes, or a crash past its count).
#pragma once

#include <string>
#include <vector>

namespace mlgo::test {

struct MachineFunctionFile {
  std::string Function, Path;
};

/// Runs llc-22 -stop-before=greedy on `bitcode` and writes, under `dir`, one
/// MIR file per machine function (the module's IR, then that function's
/// body alone). In module order.
std::vector<MachineFunctionFile> machineFunctionFiles(const std::string &bitcode, const std::string &dir);

/// Whether `mir` names a register in no register class (X86's $mxcsr, $fpcw,
/// $ssp): LLVM 22.1's MIR2Vec stops at one (llvm_unreachable), so
/// llvm-ir2vec-22 crashes on such a function.
bool hasClasslessRegister(const std::string &mir);

} // namespace mlgo::test
