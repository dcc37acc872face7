#!/usr/bin/python3
"""Checks training-log vocab output against numpy, as generate_vocab computes it.

usage: vocab_oracle.py DUMP.jsonl BUCKETS_DIR NUM_BUCKETS EXCLUDED,NAMES
DUMP.jsonl is `training-log dump` output. For every feature not excluded, the
pooled values of every element of every step go through
np.quantile(values, np.linspace(0, 1, N)); each edge must equal the file's
line, formatted with Python's repr(float).
"""
import json
import os
import sys

import numpy as np


def main():
    dump, directory, buckets, excluded = sys.argv[1], sys.argv[2], int(sys.argv[3]), set(sys.argv[4].split(","))
    pooled = {}
    for line in open(dump):
        row = json.loads(line)
        for key, value in row.items():
            if key in ("context", "observation", "outcome") or key in excluded:
                continue
            pooled.setdefault(key, []).extend(value if isinstance(value, list) else [value])
    files = sorted(f[:-len(".buckets")] for f in os.listdir(directory) if f.endswith(".buckets"))
    assert files == sorted(pooled), f"bucket files {files} != features {sorted(pooled)}"
    for key, values in pooled.items():
        expected = [repr(float(x)) for x in np.quantile(np.array(values, dtype=np.float64), np.linspace(0, 1, buckets))]
        actual = open(os.path.join(directory, key + ".buckets")).read().split("\n")
        assert actual[-1] == "", f"{key}: no final newline"
        assert actual[:-1] == expected, f"{key}: {actual[:5]}... != {expected[:5]}..."
    print(f"ok: {len(pooled)} features")


main()
