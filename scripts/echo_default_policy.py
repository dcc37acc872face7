#!/usr/bin/env python3
"""A worked example of an exec policy for `harvest-logs --policy=exec:CMD`.

harvest-logs starts one such process per worker and reuses it across
modules. On stdin it receives exactly what the compiler streams on its
interactive channel (LLVM's training-log format):

    {"features":[...],"advice":{...}}\n          one header per stream (module)
    {"context":""}\n
    {"observation":N}\n <tensor bytes> \n          one per inlining decision

After each observation it must write the decision as 8 bytes (a little-endian
int64: 0 = do not inline, 1 = inline) to stdout and flush.

With MLGO_POLICY_CERTAINTY=1 in its environment (harvest-logs --explore with
the default --explore_order=uncertain sets it), each decision is followed by
8 more bytes: a little-endian float64, how sure the policy was (smaller is
less sure; a model would send the gap between its two probabilities). The
exploration flips the least sure decisions first. Here a made-up stand-in:
how far the call graph's node count is from 20.5.

This policy answers with the compiler's own default decision (the
`inlining_default` feature), so its logs equal --policy=default's. Replace
`decide()` with a model call to serve a learned policy.
"""
import json
import os
import struct
import sys

SIZES = {"float": 4, "double": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
         "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8}
FORMATS = {"float": "f", "double": "d", "int8_t": "b", "uint8_t": "B", "int16_t": "h", "uint16_t": "H",
           "int32_t": "i", "uint32_t": "I", "int64_t": "q", "uint64_t": "Q"}


def read_tensors(stream, features):
    values = {}
    for spec in features:
        count = 1
        for d in spec["shape"]:
            count *= d
        raw = stream.read(SIZES[spec["type"]] * count)
        values[spec["name"]] = struct.unpack("<%d%s" % (count, FORMATS[spec["type"]]), raw)
    if stream.read(1) != b"\n":
        raise ValueError("expected a newline after the tensors")
    return values


def decide(features):
    return features["inlining_default"][0]


def certainty(features):
    return abs(float(features["node_count"][0]) - 20.5)


def main():
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    send_certainty = os.environ.get("MLGO_POLICY_CERTAINTY") == "1"
    features = []
    while True:
        line = stdin.readline()
        if not line:
            return  # harvest-logs closed our input: done
        record = json.loads(line)
        if "features" in record:
            features = record["features"]
        elif "observation" in record:
            values = read_tensors(stdin, features)
            stdout.write(struct.pack("<q", int(decide(values))))
            if send_certainty:
                stdout.write(struct.pack("<d", certainty(values)))
            stdout.flush()


main()
