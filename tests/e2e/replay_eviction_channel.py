#!/usr/bin/env python3
"""Replays a recorded eviction log on LLVM's own interactive channel.

Usage: replay_eviction_channel.py LOG CHANNEL_BASE

llc-22 runs its ML eviction advisor (-regalloc-enable-advisor=release
-regalloc-evict-interactive-channel-base=CHANNEL_BASE). For its k-th query
this answers the k-th recorded index_to_evict, and compares the features llc
streams with the k-th recorded observation's, byte for byte. If the recorded
columns are the default's, llc then allocates exactly as plain llc does.
Prints "replayed N of M, F feature mismatches"; exits 1 unless N == M and
F == 0. Written from the format rules in training-log-protocol.md; shares no
code with the C++ reader or the plugin.
"""
import json
import struct
import sys

from tensor_spec import logged_observations, read_exact, tensor_bytes


def recorded(path):
    """(features bytes, index_to_evict) per observation, in log order."""
    header, observations = logged_observations(path)
    names = [s["name"] for s in header["features"]]
    assert names[-1] == "index_to_evict", names
    return [(data[:-8], struct.unpack("<q", data[-8:])[0]) for _, data in observations]


def main():
    log, base = sys.argv[1], sys.argv[2]
    steps = recorded(log)
    replies = open(base + ".in", "wb", buffering=0)  # llc opens its inbound first
    stream = open(base + ".out", "rb")
    size = None
    replayed = mismatches = 0
    while True:
        line = stream.readline()
        if not line:
            break
        record = json.loads(line)
        if "features" in record:
            size = sum(tensor_bytes(s) for s in record["features"])
        elif "observation" in record:
            features = read_exact(stream, size)
            if replayed >= len(steps):
                print(f"llc asked more than the {len(steps)} recorded queries")
                return 1
            if features != steps[replayed][0]:
                mismatches += 1
            replies.write(struct.pack("<q", steps[replayed][1]))
            replayed += 1
    print(f"replayed {replayed} of {len(steps)}, {mismatches} feature mismatches")
    return 0 if replayed == len(steps) and mismatches == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
