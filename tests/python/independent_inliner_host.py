#!/usr/bin/python3
"""An independent host for opt-22's interactive inliner channel, written from
the protocol notes (training-log-protocol.md section 2), sharing no code
with harvest-logs: it runs opt-22 with the ML inliner in release mode on one
module, answers every query with the compiler's own inlining_default, and
prints what the compiler sent as JSON:
{"features": [names], "observations": [{feature: [values]}...]} (floats as
their exact bit patterns' hex, so that a comparison is bit for bit).

usage: independent_inliner_host.py OPT MODULE.bc WORKDIR [EXTRA_OPT_FLAG...]
"""
import json
import os
import struct
import subprocess
import sys
import time

SIZES = {"float": 4, "double": 8, "int64_t": 8, "int32_t": 4}
FORMATS = {"float": "f", "double": "d", "int64_t": "q", "int32_t": "i"}


def open_writer(path, child):
    # ENXIO until the compiler opens its reading end; never block on a dead child.
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.set_blocking(fd, True)
            return fd
        except OSError:
            if child.poll() is not None:
                raise RuntimeError("opt exited before opening the channel: %s" % child.stderr.read())
            time.sleep(0.001)


def read_exact(f, n):
    data = f.read(n)
    if len(data) != n:
        raise RuntimeError("short read: %d of %d bytes" % (len(data), n))
    return data


def main():
    opt, module, work = sys.argv[1:4]
    extra = sys.argv[4:]
    base = os.path.join(work, "host")
    for suffix in (".in", ".out"):
        if os.path.exists(base + suffix):
            os.unlink(base + suffix)
        os.mkfifo(base + suffix)
    child = subprocess.Popen([opt, "-passes=default<Oz>", "-enable-ml-inliner=release",
                              "-inliner-interactive-channel-base=" + base, "-inliner-interactive-include-default",
                              *extra, module, "-o", os.devnull], stderr=subprocess.PIPE, text=True)
    replies = os.fdopen(open_writer(base + ".in", child), "wb", buffering=0)
    stream = open(base + ".out", "rb")
    header = json.loads(stream.readline())
    specs = header["features"]
    observations = []
    while True:
        line = stream.readline()
        if not line:
            break
        record = json.loads(line)
        if "context" in record:
            continue
        values = {}
        for spec in specs:
            count = 1
            for d in spec["shape"]:
                count *= d
            raw = read_exact(stream, SIZES[spec["type"]] * count)
            if spec["type"] in ("float", "double"):
                values[spec["name"]] = [raw[i:i + SIZES[spec["type"]]].hex() for i in range(0, len(raw), SIZES[spec["type"]])]
            else:
                values[spec["name"]] = list(struct.unpack("<%d%s" % (count, FORMATS[spec["type"]]), raw))
        if read_exact(stream, 1) != b"\n":
            raise RuntimeError("no newline after an observation")
        observations.append(values)
        replies.write(struct.pack("<q", values["inlining_default"][0]))
    replies.close()
    stream.close()
    status = child.wait(timeout=60)
    if status != 0:
        raise RuntimeError("opt exited %d: %s" % (status, child.stderr.read()))
    json.dump({"features": [s["name"] for s in specs], "observations": observations}, sys.stdout)


main()
