#!/usr/bin/env bash
# Benchmark: mlgo_corpus.read_log against LLVM's log_reader.py on the same log.
#
#   MLGO_LOG_READER=llvm-project/llvm/lib/Analysis/models/log_reader.py \
#     bench/python_read_log.sh [MEGABYTES]        (default: 64)
#
# Generates an inliner-shaped training log of about MEGABYTES (304-byte
# observations: 37 int64 features and the decision), warms the page cache and
# times in one /usr/bin/python3 process (interpreter start-up left out), best
# of 3:
#   read_log:        mlgo_corpus.read_log(LOG): every feature as a numpy column
#   iter_log:        the same in batches of 65536 (bounded memory)
#   log_reader:      LLVM's read_stream(LOG) walked to the end (tensors left as
#                    the lazy ctypes views it yields: its lower bound)
#   log_reader+np:   the same, each tensor's values taken into per-feature
#                    lists and numpy arrays (what read_log hands over)
# and prints MB/s and observations/s for each and read_log's speed-up over
# both log_reader rows. log_reader.py is LLVM's (not in Debian's packages):
# point MLGO_LOG_READER at it in an LLVM source tree; without it only our rows
# are printed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
package=${MLGO_BUILD_DIR:-$root/build}/python
mb=${1:-64}
work=$root/bench/.work
mkdir -p "$work"
log=$work/python_read_log_${mb}MB.log
[ -x "$bin/mlgo-bench-make-log" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
[ -f "$package/mlgo_corpus/__init__.py" ] || { echo "no Python package in $package (python3-dev, pybind11-dev)" >&2; exit 1; }
[ -f "$log" ] || "$bin/mlgo-bench-make-log" "$log" "$mb"
cat "$log" >/dev/null
PYTHONPATH=$package /usr/bin/python3 - "$log" "${MLGO_LOG_READER:-}" <<'PY'
import importlib.util
import os
import sys
import time

import numpy as np

import mlgo_corpus

path, reader_path = sys.argv[1], sys.argv[2]
size_mb = os.path.getsize(path) / 1e6


def best(fn, rounds=3):
    times, result = [], None
    for _ in range(rounds):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def ours():
    return len(mlgo_corpus.read_log(path))


def ours_streamed():
    return sum(len(batch) for batch in mlgo_corpus.iter_log(path, batch_size=65536))


rows = []
seconds, n = best(ours)
rows.append(("read_log", seconds, n))
seconds, n2 = best(ours_streamed)
assert n2 == n
rows.append(("iter_log", seconds, n2))
if reader_path:
    spec = importlib.util.spec_from_file_location("log_reader", reader_path)
    log_reader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(log_reader)

    def walk():
        return sum(1 for _ in log_reader.read_stream(path))

    def to_numpy():
        columns = None
        count = 0
        for _, _, features, _ in log_reader.read_stream(path):
            if columns is None:
                columns = [[] for _ in features]
            for column, tensor in zip(columns, features):
                column.extend(tensor[i] for i in range(len(tensor)))
            count += 1
        arrays = [np.asarray(c) for c in columns or []]
        return count

    seconds, n3 = best(walk, rounds=1)
    assert n3 == n, (n3, n)
    rows.append(("log_reader", seconds, n3))
    seconds, n4 = best(to_numpy, rounds=1)
    rows.append(("log_reader+np", seconds, n4))
else:
    print("bench: MLGO_LOG_READER is not set: LLVM's log_reader.py rows left out", file=sys.stderr)
print("%-14s %-10s %-10s %-14s" % ("reader", "seconds", "MB/s", "observations/s"))
for name, seconds, count in rows:
    print("%-14s %-10.3f %-10.1f %-14.0f" % (name, seconds, size_mb / seconds, count / seconds))
ours_seconds = rows[0][1]
for name, seconds, _ in rows[2:]:
    print("read_log is %.1fx faster than %s" % (seconds / ours_seconds, name))
PY
