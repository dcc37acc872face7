#!/usr/bin/env bash
# Benchmark: harvest-logs --policy=default against plain opt + llc.
#
#   bench/harvest.sh [N ...]     (default: 200)
#
# For each N, generates an N-module corpus (C compiled with clang-22 -Oz
# -Xclang -disable-llvm-passes -emit-llvm, so minsize/optsize are set; each
# module has 10-70 functions making 6 calls each), then times, with the same
# parallelism (2):
#   baseline:     opt-22 -passes='default<Oz>' + llc-22 -O2 -filetype=obj per module (xargs -P2)
#   harvest-logs: --policy=default --num_workers=2 (interactive channel, logs, sizes)
# and prints the ratio, decisions per second and the harvester's own peak RSS.
# A regalloc row follows: N optimized modules with high register pressure,
# plain llc-22 -O2 against harvest-logs --problem=regalloc-evict
# --compiler=llc --policy=random:0.5 (stock llc sends no default eviction, so
# a random policy stands in; its evictions change the allocation).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/harvest-logs" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
work=$root/bench/.work
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(200)

generate() { # N DIR
  local n=$1 dir=$2
  [ -f "$dir/corpus/corpus_description.json" ] && return
  rm -rf "$dir" && mkdir -p "$dir/src" "$dir/bc"
  for ((i = 0; i < n; i++)); do
    local leaves=$((8 + i % 30)) mids=$((10 + (i * 7) % 60))
    {
      echo "static int table[256];"
      for ((f = 0; f < leaves; f++)); do
        echo "static int leaf$f(int x) { return (x * $((f + 3))) ^ table[x & 255]; }"
      done
      for ((f = 0; f < mids; f++)); do
        printf 'int mid%d(int x) { return 0' "$f"
        for ((k = 0; k < 6; k++)); do printf ' + leaf%d(x + %d)' $(((f * 7 + k) % leaves)) "$k"; done
        echo "; }"
      done
      echo "int top$i(int x) { int s = 0; for (int k = 0; k < x; ++k) {"
      for ((f = 0; f < mids; f++)); do echo "  s += mid$f(s + k);"; done
      echo "} return s; }"
    } > "$dir/src/m$i.c"
  done
  echo "bench: compiling $n modules..." >&2
  (cd "$dir" && ls src | sed 's/\.c$//' |
    xargs -P"$(nproc)" -I{} clang-22 -Oz -Xclang -disable-llvm-passes -emit-llvm -c src/{}.c -o bc/{}.bc)
  "$bin/make-corpus" -q --input_dir="$dir/bc" --output_dir="$dir/corpus"
}

generate_regalloc() { # N DIR: modules whose functions keep 24-60 doubles live across a loop
  local n=$1 dir=$2
  [ -f "$dir/corpus/corpus_description.json" ] && return
  rm -rf "$dir" && mkdir -p "$dir/src" "$dir/bc"
  for ((i = 0; i < n; i++)); do
    {
      for ((fn = 0; fn < 3; fn++)); do
        local live=$((24 + 8 * fn + i % 13))
        echo "double f${fn}_$i(double *a, int n) {"
        for ((v = 0; v < live; v++)); do echo "  double v$v = a[$v] * $((v + 1)).5;"; done
        echo "  for (int k = 0; k < n; ++k) {"
        for ((v = 0; v < live; v++)); do echo "    v$v = v$v * a[k] + v$(((v + 7) % live));"; done
        printf '  }\n  return 0'
        for ((v = 0; v < live; v++)); do printf ' + v%d' "$v"; done
        echo ";"
        echo "}"
      done
    } > "$dir/src/r$i.c"
  done
  echo "bench: compiling $n regalloc modules..." >&2
  (cd "$dir" && ls src | sed 's/\.c$//' | xargs -P"$(nproc)" -I{} clang-22 -O2 -emit-llvm -c src/{}.c -o bc/{}.bc)
  "$bin/make-corpus" -q --input_dir="$dir/bc" --output_dir="$dir/corpus"
}

now() { date +%s.%N; }
printf '%-9s %-6s %-10s %-10s %-7s %-10s %-12s %-14s\n' problem N baseline_s harvest_s ratio decisions decisions/s harvester_RSS_MB
for n in "${sizes[@]}"; do
  dir=$work/harvest_$n
  generate "$n" "$dir"
  rm -rf "$dir/plain" "$dir/out" && mkdir -p "$dir/plain"
  t0=$(now)
  (cd "$dir" && ls corpus/*.bc | xargs -P2 -I{} sh -c \
    'b=$(basename "$1" .bc); opt-22 "-passes=default<Oz>" "$1" -o plain/$b.opt.bc && llc-22 -O2 -filetype=obj plain/$b.opt.bc -o plain/$b.o' _ {})
  t1=$(now)
  "$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$dir/out" --policy=default --num_workers=2
  t2=$(now)
  base=$(echo "$t1 - $t0" | bc -l)
  ours=$(echo "$t2 - $t1" | bc -l)
  decisions=$(grep -o '"decisions": [0-9]*' "$dir/out/summary.json" | grep -o '[0-9]*$')
  rss=$(grep -o '"harvester_peak_rss_kb": [0-9]*' "$dir/out/summary.json" | grep -o '[0-9]*$')
  ok=$(grep -c '"status":"ok"' "$dir/out/harvest.jsonl" || true)
  [ "$ok" -eq "$n" ] || echo "bench: only $ok of $n modules ok" >&2
  printf '%-9s %-6s %-10.2f %-10.2f %-7.2f %-10s %-12.0f %-14.1f\n' inliner "$n" "$base" "$ours" \
    "$(echo "$ours / $base" | bc -l)" "$decisions" "$(echo "$decisions / $ours" | bc -l)" "$(echo "$rss / 1024" | bc -l)"

  dir=$work/regalloc_$n
  generate_regalloc "$n" "$dir"
  rm -rf "$dir/plain" "$dir/out" && mkdir -p "$dir/plain"
  t0=$(now)
  (cd "$dir" && ls corpus/*.bc | xargs -P2 -I{} sh -c 'llc-22 -O2 -filetype=obj "$1" -o plain/$(basename "$1" .bc).o' _ {})
  t1=$(now)
  "$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$dir/out" --problem=regalloc-evict --compiler=llc \
    --policy=random:0.5:1 --num_workers=2
  t2=$(now)
  base=$(echo "$t1 - $t0" | bc -l)
  ours=$(echo "$t2 - $t1" | bc -l)
  decisions=$(grep -o '"decisions": [0-9]*' "$dir/out/summary.json" | grep -o '[0-9]*$')
  rss=$(grep -o '"harvester_peak_rss_kb": [0-9]*' "$dir/out/summary.json" | grep -o '[0-9]*$')
  printf '%-9s %-6s %-10.2f %-10.2f %-7.2f %-10s %-12.0f %-14.1f\n' regalloc "$n" "$base" "$ours" \
    "$(echo "$ours / $base" | bc -l)" "$decisions" "$(echo "$decisions / $ours" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
done
