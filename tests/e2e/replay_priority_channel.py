#!/usr/bin/env python3
"""Answers LLVM's own ML priority advisor with a recorded priority log.

Usage: replay_priority_channel.py LOG CHANNEL_BASE

llc-22 runs its ML priority advisor (-regalloc-enable-priority-advisor=release
-regalloc-priority-interactive-channel-base=CHANNEL_BASE). For the k-th query
of a function this answers the function's k-th recorded `priority` (0.0 past
the recorded ones) and compares the features llc streams with the recorded
observation's, byte for byte. Prints llc's channel header ("header: JSON"),
one line "first F K" per function F whose K-th query (from 0) is the first
whose features differ from the recorded ones, or K = its number of queries,
then "replayed N of M, F feature mismatches, E extra queries". Exits 1 on a
protocol error only: the test judges the counts. Written from the format
rules in training-log-protocol.md; shares no code with the C++ reader or the
plugin.
"""
import json
import struct
import sys

from tensor_spec import logged_observations, read_exact, tensor_bytes


def recorded(path):
    """{function: [(features bytes, priority bytes)]}, in log order."""
    header, observations = logged_observations(path)
    names = [s["name"] for s in header["features"]]
    assert names[-1] == "priority" and header["features"][-1]["type"] == "float", names
    out = {}
    for context, data in observations:
        out.setdefault(context, []).append((data[:-4], data[-4:]))
    return out


def main():
    log, base = sys.argv[1], sys.argv[2]
    steps = recorded(log)
    total = sum(len(v) for v in steps.values())
    replies = open(base + ".in", "wb", buffering=0)  # llc opens its inbound first
    stream = open(base + ".out", "rb")
    size = None
    context = None
    taken = {}
    first = {}
    replayed = mismatches = extra = 0
    while True:
        line = stream.readline()
        if not line:
            break
        record = json.loads(line)
        if "features" in record:
            print("header: " + json.dumps({"features": record["features"], "advice": record.get("advice")}))
            size = sum(tensor_bytes(s) for s in record["features"])
        elif "context" in record:
            context = record["context"]
        elif "observation" in record:
            features = read_exact(stream, size)
            k = taken.get(context, 0)
            taken[context] = k + 1
            mine = steps.get(context, [])
            if k < len(mine):
                if features != mine[k][0]:
                    mismatches += 1
                    first.setdefault(context, k)
                replies.write(mine[k][1])
                replayed += 1
            else:
                first.setdefault(context, k)
                extra += 1
                replies.write(struct.pack("<f", 0.0))
    for function, count in taken.items():
        print(f"first {function} {first.get(function, count)}")
    print(f"replayed {replayed} of {total}, {mismatches} feature mismatches, {extra} extra queries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
