#!/usr/bin/python3
"""Writes a seeded MIR2Vec vocabulary for the tests (Debian ships none): every
entity `llvm-ir2vec-22 entities --mode=mir` lists for a target (it needs a
MIR file of that target), a vector of DIM values drawn from a seeded
generator, in the JSON layout MIR2Vec reads: sections Opcodes (base opcode
names), CommonOperands (operand kinds), PhysicalRegisters and
VirtualRegisters (register class names, listed as PhyReg_<class> and
VirtReg_<class>).

usage: make_mir2vec_vocab.py LLVM_IR2VEC FILE.mir OUT.json [DIM] [SEED]
"""
import json
import random
import subprocess
import sys

COMMON = ("Immediate", "CImmediate", "FPImmediate", "MBB", "FrameIndex", "ConstantPoolIndex", "TargetIndex",
          "JumpTableIndex", "ExternalSymbol", "GlobalAddress", "BlockAddress", "RegisterMask", "RegisterLiveOut",
          "Metadata", "MCSymbol", "CFIIndex", "IntrinsicID", "Predicate", "ShuffleMask", "LaneMask")


def main():
    tool, mir, out = sys.argv[1], sys.argv[2], sys.argv[3]
    dim = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
    listing = subprocess.run([tool, "entities", "--mode=mir", mir], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    names = [line.split("\t")[0] for line in listing[1:] if "\t" in line]
    sections = {"Opcodes": {}, "CommonOperands": {}, "PhysicalRegisters": {}, "VirtualRegisters": {}}
    opcodes = True
    for name in names:
        if name == COMMON[0]:
            opcodes = False
        if opcodes:
            section, key = "Opcodes", name
        elif name.startswith("PhyReg_"):
            section, key = "PhysicalRegisters", name[len("PhyReg_"):]
        elif name.startswith("VirtReg_"):
            section, key = "VirtualRegisters", name[len("VirtReg_"):]
        else:
            assert name in COMMON, name
            section, key = "CommonOperands", name
        sections[section][key] = [round(rng.uniform(-1, 1), 6) for _ in range(dim)]
    with open(out, "w") as f:
        json.dump(sections, f, indent=1)


main()
