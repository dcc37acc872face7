#!/usr/bin/python3
"""Writes a seeded IR2Vec vocabulary for the tests (Debian ships none): every
entity `llvm-ir2vec-22 entities` lists, a vector of DIM values drawn from a
seeded generator, in the JSON layout IR2Vec reads (sections Opcodes, Types,
Arguments; the compare predicates, listed last, are left out: LLVM 22 falls
back to its own for them).

usage: make_ir2vec_vocab.py LLVM_IR2VEC OUT.json [DIM] [SEED]
"""
import json
import random
import subprocess
import sys

OPERANDS = ("Function", "Pointer", "Constant", "Variable")


def main():
    tool, out = sys.argv[1], sys.argv[2]
    dim = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    listing = subprocess.run([tool, "entities"], capture_output=True, text=True, check=True).stdout.splitlines()
    names = [line.split("\t")[0] for line in listing[1:] if "\t" in line]
    sections = {"Opcodes": {}, "Types": {}, "Arguments": {}}
    for name in names:
        if name.startswith(("FCMP_", "ICMP_")):
            continue
        section = "Arguments" if name in OPERANDS else "Types" if name.endswith("Ty") else "Opcodes"
        sections[section][name] = [round(rng.uniform(-1, 1), 6) for _ in range(dim)]
    with open(out, "w") as f:
        json.dump(sections, f, indent=1)


main()
