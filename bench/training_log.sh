#!/usr/bin/env bash
# Benchmark: training-log read throughput against cat of the same file.
#
#   bench/training_log.sh [MEGABYTES]     (default: 1024)
#
# Generates an inliner-shaped training log of about MEGABYTES (304-byte
# observations with 0x0a bytes among the tensors), warms the page cache, and
# times, best of 3, `cat LOG > /dev/null` against `training-log validate LOG`
# (a full parse: every JSON line, every tensor read by exact count). Prints
# GB/s for both and the ratio.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/training-log" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
mb=${1:-1024}
work=$root/bench/.work
mkdir -p "$work"
log=$work/bench_${mb}MB.log
[ -f "$log" ] || "$bin/mlgo-bench-make-log" "$log" "$mb"
bytes=$(stat -c %s "$log")
cat "$log" > /dev/null

best() { # best wall seconds of 3 runs of "$@"
  local best=""
  for _ in 1 2 3; do
    local t0 t1 t
    t0=$(date +%s.%N)
    "$@" > /dev/null
    t1=$(date +%s.%N)
    t=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}
cat_s=$(best cat "$log")
ours_s=$(best "$bin/training-log" validate "$log")
gbps() { echo "$bytes / $1 / 1000000000" | bc -l; }
printf 'log: %s (%.0f MB)\n' "$log" "$(echo "$bytes / 1000000" | bc -l)"
printf '%-22s %8.3f s  %6.2f GB/s\n' "cat" "$cat_s" "$(gbps "$cat_s")"
printf '%-22s %8.3f s  %6.2f GB/s\n' "training-log validate" "$ours_s" "$(gbps "$ours_s")"
printf 'ratio (training-log / cat): %.2f\n' "$(echo "$ours_s / $cat_s" | bc -l)"
