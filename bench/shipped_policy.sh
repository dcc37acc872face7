#!/usr/bin/env bash
# Benchmark: the cost of building with the shipped inliner-for-size policy,
# as a user deploys it (models/inliner-oz through the plugin in the stock
# clang-22), against plain clang-22 -Oz, in this run.
#
#   bench/shipped_policy.sh [MODEL_DIR]     (default: models/inliner-oz)
#
# Compiles every .c file of a real C library (zstd's lib/, from npm's
# zstd-napi tarball, as bench/harvest.sh's zstd row; the generated corpus'
# sources when npm cannot fetch it) with `clang-22 -Oz -c` and with
# `clang-22 -Oz -c -fpass-plugin=libMLGOInlineAdvisor.so -mllvm
# -mlgo-inliner-policy=tflite:MODEL_DIR`, one file at a time, the two
# interleaved over MLGO_BENCH_ROUNDS rounds (default 3); prints each one's
# median wall time, their ratio (the target is <= 1.05x) and the objects'
# total text size (llvm-size) under each.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MLGO_BUILD_DIR:-$root/build}
bin=$build/bin
plugin=$build/lib/mlgo-corpus/libMLGOInlineAdvisor.so
model=$(realpath "${1:-$root/models/inliner-oz}")
rounds=${MLGO_BENCH_ROUNDS:-3}
[ -f "$plugin" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
[ -f "$model/model.tflite" ] || { echo "no policy in $model" >&2; exit 1; }
work=$root/bench/.work
# shellcheck source=bench/corpora.sh
source "$root/bench/corpora.sh"

if generate_zstd "$work/zstd"; then
  src=$work/zstd/package/deps/zstd/lib
  label="zstd lib"
else
  generate 100 "$work/corpus_100"
  src=$work/corpus_100/src
  label="generated (100 modules)"
fi
mapfile -t files < <(cd "$src" && find . -name '*.c' | sort)
out=$work/shipped_policy
rm -rf "$out" && mkdir -p "$out/plain" "$out/policy"

now() { date +%s.%N; }
build_all() { # KIND: plain or policy
  local kind=$1 extra=()
  [ "$kind" = policy ] && extra=(-fpass-plugin="$plugin" -mllvm -mlgo-inliner-policy=tflite:"$model")
  local start
  start=$(now)
  for f in "${files[@]}"; do
    (cd "$src" && clang-22 -Oz -c "${extra[@]}" "$f" -o "$out/$kind/$(echo "${f#./}" | tr / _).o")
  done
  awk -v a="$(now)" -v b="$start" 'BEGIN {print a - b}'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

plain_times=() policy_times=()
for ((r = 1; r <= rounds; r++)); do
  plain_times+=("$(build_all plain)")
  policy_times+=("$(build_all policy)")
done
plain=$(printf '%s\n' "${plain_times[@]}" | median)
policy=$(printf '%s\n' "${policy_times[@]}" | median)
text() { llvm-size-22 "$1"/*.o | awk 'NR > 1 {s += $1} END {print s}'; }
echo "shipped policy ($model) on $label: ${#files[@]} files, $rounds rounds, medians"
printf '  clang-22 -Oz -c                 %8.2f s   text %d\n' "$plain" "$(text "$out/plain")"
printf '  with the plugin and the policy  %8.2f s   text %d\n' "$policy" "$(text "$out/policy")"
printf '  compile-time ratio              %8.3fx   (target <= 1.05x)\n' "$(awk -v a="$policy" -v b="$plain" 'BEGIN {print a / b}')"
