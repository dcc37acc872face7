#!/usr/bin/env bash
# Benchmark: regalloc eviction harvests on a stock llc-22, in-process (the
# regalloc plugin) against the interactive channel and plain llc-22.
#
#   bench/regalloc.sh [N ...]     (default: 100; MLGO_BENCH_ROUNDS: rounds per row, default 3)
#
# Corpora: N generated modules with high register pressure (bench/corpora.sh's
# generate_regalloc: 3 functions keeping 24-60 doubles live across a loop),
# and, when npm can fetch it, zstd's lib/ (26 files, as bench/harvest.sh
# fetches it) compiled with clang-22 -O2 -emit-llvm. Rows, each with the same
# parallelism (2):
#   plain-llc:           llc-22 -O2 -filetype=obj per module (xargs -P2)
#   default/plugin:      harvest-logs --problem=regalloc-evict --compiler=llc --policy=default --mode=plugin
#   random/plugin:       the same with --policy=random:0.5:1 (decided inside llc by the plugin)
#   random/interactive:  --policy=random:0.5:1 --mode=interactive (the harvester answers over the FIFOs)
# each with the compile server off, and the plugin rows again with it on
# (+server: llc's start-up paid once per worker).
# and prints each one's ratio to plain llc measured in the same run (medians
# over the rounds, interleaved). The random rows must take the same decisions
# (checked: the same count per module).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/harvest-logs" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
work=$root/bench/.work
sizes=("$@")
rounds=${MLGO_BENCH_ROUNDS:-3}
[ ${#sizes[@]} -gt 0 ] || sizes=(100)

# shellcheck source=bench/corpora.sh
source "$root/bench/corpora.sh"

# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"
row() { # CORPUS N MODE SECONDS BASELINE [OUTDIR]
  local decisions=- rate=-
  if [ -n "${6:-}" ]; then
    decisions=$(grep -o '"decisions": [0-9]*' "$6/summary.json" | grep -o '[0-9]*$')
    rate=$(printf '%.0f' "$(echo "$decisions / $4" | bc -l)")
    local ok
    ok=$(grep -c '"status":"ok"' "$6/harvest.jsonl" || true)
    [ "$ok" -eq "$2" ] || echo "bench: only $ok of $2 modules ok in $6" >&2
  fi
  printf '%-16s %-5s %-22s %-9.2f %-7.3f %-10s %-11s\n' "$1" "$2" "$3" "$4" "$(echo "$4 / $5" | bc -l)" "$decisions" "$rate"
}
plain_llc() { # DIR
  rm -rf "$1/plain" && mkdir -p "$1/plain"
  (cd "$1" && ls corpus/*.bc | xargs -P2 -I{} sh -c 'llc-22 -O2 -filetype=obj "$1" -o plain/$(basename "$1" .bc).o' _ {})
}
harvest() { # DIR MODE SERVER [FLAGS...]: a fresh harvest into DIR/MODE, the compile server SERVER (on/off)
  local dir=$1 mode=$2 server=$3
  shift 3
  rm -rf "${dir:?}/$mode"
  "$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$dir/$mode" --num_workers=2 --compile_server="$server" \
    --problem=regalloc-evict --compiler=llc "$@"
}
decisions_by_module() { # OUTDIR: "module decisions" lines, sorted
  grep -o '"module":"[^"]*".*"decisions":[0-9]*' "$1/harvest.jsonl" |
    sed 's/"module":"\([^"]*\)".*"decisions":\([0-9]*\)/\1 \2/' | sort
}
generate_zstd_o2() { # DIR: zstd's lib/ as optimized bitcode (-O2), for llc; 1 if unavailable
  local dir=$1 src=$work/zstd
  [ -f "$dir/corpus/corpus_description.json" ] && return 0
  generate_zstd "$src" || return 1
  rm -rf "$dir" && mkdir -p "$dir/bc"
  (cd "$src/package/deps/zstd/lib" && find . -name '*.c' | sed 's|^\./||; s|\.c$||' |
    xargs -P"$(nproc)" -I{} sh -c 'clang-22 -O2 -emit-llvm -c {}.c -o "$1/$(echo {} | tr / _).bc"' _ "$dir/bc")
  "$bin/make-corpus" -q --input_dir="$dir/bc" --output_dir="$dir/corpus"
}

measure() { # NAME N DIR
  local name=$1 n=$2 dir=$3
  local plain=() dflt=() rplug=() rint=() dserv=() rserv=()
  for ((r = 0; r < rounds; r++)); do
    plain+=("$(timed plain_llc "$dir")")
    dflt+=("$(timed harvest "$dir" default off --policy=default --mode=plugin)")
    dserv+=("$(timed harvest "$dir" default-server on --policy=default --mode=plugin)")
    rplug+=("$(timed harvest "$dir" random-plugin off --policy=random:0.5:1 --mode=plugin)")
    rserv+=("$(timed harvest "$dir" random-server on --policy=random:0.5:1 --mode=plugin)")
    rint+=("$(timed harvest "$dir" random-interactive off --policy=random:0.5:1 --mode=interactive)")
  done
  for other in random-interactive random-server; do
    [ "$(decisions_by_module "$dir/random-plugin")" = "$(decisions_by_module "$dir/$other")" ] ||
      { echo "bench: $name: random-plugin and $other took different decisions" >&2; exit 1; }
  done
  local base
  base=$(median "${plain[@]}")
  row "$name" "$n" plain-llc "$base" "$base"
  row "$name" "$n" default/plugin "$(median "${dflt[@]}")" "$base" "$dir/default"
  row "$name" "$n" default/plugin+server "$(median "${dserv[@]}")" "$base" "$dir/default-server"
  row "$name" "$n" random/plugin "$(median "${rplug[@]}")" "$base" "$dir/random-plugin"
  row "$name" "$n" random/plugin+server "$(median "${rserv[@]}")" "$base" "$dir/random-server"
  row "$name" "$n" random/interactive "$(median "${rint[@]}")" "$base" "$dir/random-interactive"
}

echo "bench: $rounds rounds per row, interleaved; each figure is the median" >&2
printf '%-16s %-5s %-22s %-9s %-7s %-10s %-11s\n' corpus N mode seconds ratio decisions decisions/s
for n in "${sizes[@]}"; do
  generate_regalloc "$n" "$work/regalloc_$n"
  measure regalloc "$n" "$work/regalloc_$n"
done
if generate_zstd_o2 "$work/zstd_o2"; then
  measure zstd-O2 26 "$work/zstd_o2"
fi
