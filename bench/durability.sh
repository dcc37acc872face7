#!/usr/bin/env bash
# Benchmark: the cost of durable writes (the default) against --no_fsync.
#
#   bench/durability.sh [N [all|make-corpus|harvest-logs]]     (default: 500 all)
#
# Generates an N-module corpus (small C modules, clang-22 -Oz -emit-llvm),
# then times, alternating, twice each, into fresh output directories:
#   make-corpus   (N files copied, journaled)        default vs --no_fsync
#   harvest-logs  --policy=default --num_workers=2   default vs --no_fsync
# and prints each median and the ratio durable / no_fsync.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/harvest-logs" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
n=${1:-500}
rows=${2:-all}
work=$root/bench/.work/durability-$n
if [ ! -f "$work/corpus/corpus_description.json" ]; then
  rm -rf "$work" && mkdir -p "$work/src" "$work/bc"
  for ((i = 0; i < n; i++)); do
    {
      for ((f = 0; f < 6; f++)); do echo "static int leaf$f(int x) { return x * $((f + 3)) + $i; }"; done
      echo "int top$i(int x) { return leaf0(x) + leaf1(x) + leaf2(x) + leaf3(x) + leaf4(x) + leaf5(x); }"
    } > "$work/src/m$i.c"
  done
  echo "bench: compiling $n modules..." >&2
  (cd "$work" && ls src | sed 's/\.c$//' |
    xargs -P"$(nproc)" -I{} clang-22 -Oz -Xclang -disable-llvm-passes -emit-llvm -c src/{}.c -o bc/{}.bc)
  "$bin/make-corpus" -q --input_dir="$work/bc" --output_dir="$work/corpus"
fi

seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc; }
median2() { echo "($1 + $2) / 2" | bc -l; }

row() { # NAME COMMAND-PREFIX (output dir appended)
  local name=$1; shift
  local d1 d2 f1 f2
  rm -rf "$work/o"; d1=$(seconds "$@" "$work/o")
  rm -rf "$work/o"; f1=$(seconds "$@" "$work/o" --no_fsync)
  rm -rf "$work/o"; d2=$(seconds "$@" "$work/o")
  rm -rf "$work/o"; f2=$(seconds "$@" "$work/o" --no_fsync)
  rm -rf "$work/o"
  local d f
  d=$(median2 "$d1" "$d2"); f=$(median2 "$f1" "$f2")
  printf '%-14s N=%-5s durable %7.2fs  --no_fsync %7.2fs  ratio %.2f\n' "$name" "$n" "$d" "$f" "$(echo "$d / $f" | bc -l)"
}

run_make_corpus() { local out=$1; shift; "$bin/make-corpus" -q --input_dir="$work/bc" --output_dir="$out" "$@"; }
run_harvest() {
  local out=$1; shift
  "$bin/harvest-logs" -q --policy=default --num_workers=2 --corpus="$work/corpus" --output_dir="$out" "$@"
}
case $rows in
all | make-corpus) row make-corpus run_make_corpus ;;&
all | harvest-logs) row harvest-logs run_harvest ;;
esac
