#!/usr/bin/env bash
# Benchmark: harvest-logs --policy=default against plain opt + llc.
#
#   bench/harvest.sh [N ...]     (default: 200; MLGO_BENCH_ROUNDS: rounds per row, default 3)
#
# For each N, generates two N-module corpora compiled with clang-22 -Oz
# -Xclang -disable-llvm-passes -emit-llvm (so minsize/optsize are set): C
# (10-70 functions making 6 calls each) and decision-dense C++ (templates and
# 300-600 small functions, 2000-4000 inlining decisions per module); and a
# real C library the same way: zstd's lib/ (26 files, zstd 1.5 as bundled in
# npm's zstd-napi 0.0.13 tarball, fetched once with npm pack; without npm the
# row is left out). For
# each it times, one run each with the same parallelism (2):
#   baseline:     opt-22 -passes='default<Oz>' + llc-22 -O2 -filetype=obj per module (xargs -P2)
#   interactive:  harvest-logs --mode=interactive --policy=default --num_workers=2 --compile_server=off (FIFO channel)
#   plugin:       harvest-logs --mode=plugin --policy=default --num_workers=2 --compile_server=off (in-process plugin)
#   plugin+server, interactive+server: the same with --compile_server=on
#                 (opt and llc run in warm children of mlgo-compile-server)
# and prints each one's ratio to the baseline, decisions per second, the
# harvester's own peak RSS and the largest compile server's. Three more rows
# say how far a server can go on this machine: "start-up only" runs the
# baseline's processes on an empty module (start-up is all they do);
# "read-back" is what llc spends reading and verifying opt's bitcode
# (opt-22 -passes=verify on each optimized module, minus the same on an
# empty one), which a server's one-child opt-then-llc also saves; and
# "compile floor" is plain opt+llc minus both: the compiling itself, which
# no server removes. A harvest does all of it and the advisor's own work on
# top (its features and logs), so no harvest, with or without a server,
# goes below the floor by more than the rounds' noise.
# MLGO_BENCH_CXX_N sets the C++ corpus' size (default: N).
# Regalloc rows follow: N optimized modules with high register pressure,
# plain llc-22 -O2 against harvest-logs --problem=regalloc-evict
# --compiler=llc --policy=random:0.5 (stock llc sends no default eviction, so
# a random policy stands in over the interactive channel; its evictions
# change the allocation), and against the regalloc plugin's default eviction
# trace (--policy=default --mode=plugin), each with --compile_server=off and on.
# MLGO_BENCH_PROBLEMS: which rows to run (default: "inliner regalloc").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/harvest-logs" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
work=$root/bench/.work
sizes=("$@")
rounds=${MLGO_BENCH_ROUNDS:-3}
[ ${#sizes[@]} -gt 0 ] || sizes=(200)
problems=${MLGO_BENCH_PROBLEMS:-inliner regalloc}

# The generated corpora (generate, generate_zstd, generate_cxx, generate_regalloc).
# shellcheck source=bench/corpora.sh
source "$root/bench/corpora.sh"

# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"
row() { # PROBLEM/CORPUS N MODE SECONDS BASELINE [OUTDIR]
  local decisions=- rate=- rss=- server=-
  if [ -n "${6:-}" ]; then
    local kb
    kb=$(tr -d ' \n' < "$6/summary.json" | grep -o '"compile_server":{[^}]*' | grep -o '"peak_rss_kb":[0-9]*' | grep -o '[0-9]*$' || true)
    [ -n "$kb" ] && [ "$kb" != 0 ] && server=$(printf '%.1f' "$(echo "$kb / 1024" | bc -l)")
    decisions=$(grep -o '"decisions": [0-9]*' "$6/summary.json" | grep -o '[0-9]*$')
    rss=$(printf '%.1f' "$(echo "$(grep -o '"harvester_peak_rss_kb": [0-9]*' "$6/summary.json" | grep -o '[0-9]*$') / 1024" | bc -l)")
    rate=$(printf '%.0f' "$(echo "$decisions / $4" | bc -l)")
    local ok
    ok=$(grep -c '"status":"ok"' "$6/harvest.jsonl" || true)
    [ "$ok" -eq "$2" ] || echo "bench: only $ok of $2 modules ok in $6" >&2
  fi
  printf '%-14s %-6s %-22s %-10.2f %-7.3f %-10s %-12s %-17s %-14s\n' "$1" "$2" "$3" "$4" "$(echo "$4 / $5" | bc -l)" \
    "$decisions" "$rate" "$rss" "$server"
}
plain_inliner() { # DIR
  rm -rf "$1/plain" && mkdir -p "$1/plain"
  (cd "$1" && ls corpus/*.bc | xargs -P2 -I{} sh -c \
    'b=$(basename "$1" .bc); opt-22 "-passes=default<Oz>" "$1" -o plain/$b.opt.bc && llc-22 -O2 -filetype=obj plain/$b.opt.bc -o plain/$b.o' _ {})
}
harvest() { # DIR MODE [FLAGS...]: a fresh harvest into DIR/MODE
  local dir=$1 mode=$2
  shift 2
  rm -rf "${dir:?}/$mode"
  "$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$dir/$mode" --num_workers=2 "$@"
}
startup_only() { # DIR: plain_inliner's processes, each on an empty module: what start-up alone costs
  rm -rf "$1/startup" && mkdir -p "$1/startup"
  printf 'target triple = "%s"\n' "$(llc-22 --version | sed -n 's/^ *Default target: *//p')" > "$1/startup/empty.ll"
  llvm-as-22 "$1/startup/empty.ll" -o "$1/startup/empty.bc"
  (cd "$1" && ls corpus/*.bc | xargs -P2 -I{} sh -c \
    'b=$(basename "$1" .bc); opt-22 "-passes=default<Oz>" startup/empty.bc -o startup/$b.opt.bc && llc-22 -O2 -filetype=obj startup/$b.opt.bc -o startup/$b.o' _ {})
}
readback() { # DIR [EMPTY]: opt-22 reading and verifying each of plain_inliner's optimized modules (or, with EMPTY, an empty module as often)
  (cd "$1" && ls corpus/*.bc | xargs -P2 -I{} sh -c \
    'b=$(basename "$1" .bc); m=plain/$b.opt.bc; [ -n "$2" ] && m=startup/empty.bc; opt-22 -passes=verify -disable-output "$m"' _ {} "${2:-}")
}
plain_llc() { # DIR
  rm -rf "$1/plain" && mkdir -p "$1/plain"
  (cd "$1" && ls corpus/*.bc | xargs -P2 -I{} sh -c 'llc-22 -O2 -filetype=obj "$1" -o plain/$(basename "$1" .bc).o' _ {})
}

echo "bench: $rounds rounds per row, interleaved; each figure is the median" >&2
printf '%-14s %-6s %-22s %-10s %-7s %-10s %-12s %-17s %-14s\n' corpus N mode seconds ratio decisions decisions/s harvester_RSS_MB server_RSS_MB
for n in "${sizes[@]}"; do
  kinds=()
  [[ " $problems " == *" inliner "* ]] && kinds=(c zstd cxx)
  for kind in "${kinds[@]}"; do
    m=$n
    [ $kind = cxx ] && m=${MLGO_BENCH_CXX_N:-$n}
    [ $kind = zstd ] && m=26
    dir=$work/harvest_${kind}_$m
    case $kind in
    c) generate "$m" "$dir" ;;
    zstd) generate_zstd "$dir" || continue ;;
    cxx) generate_cxx "$m" "$dir" ;;
    esac
    plain=() startup=() reads=() reads0=() interactive=() plugin=() iserver=() pserver=()
    for ((r = 0; r < rounds; r++)); do
      plain+=("$(timed plain_inliner "$dir")")
      startup+=("$(timed startup_only "$dir")")
      reads+=("$(timed readback "$dir")")
      reads0+=("$(timed readback "$dir" empty)")
      interactive+=("$(timed harvest "$dir" interactive --mode=interactive --compile_server=off)")
      plugin+=("$(timed harvest "$dir" plugin --mode=plugin --compile_server=off)")
      iserver+=("$(timed harvest "$dir" interactive-server --mode=interactive --compile_server=on)")
      pserver+=("$(timed harvest "$dir" plugin-server --mode=plugin --compile_server=on)")
    done
    base=$(median "${plain[@]}")
    row "inliner/$kind" "$m" plain-opt+llc "$base" "$base"
    row "inliner/$kind" "$m" interactive "$(median "${interactive[@]}")" "$base" "$dir/interactive"
    row "inliner/$kind" "$m" interactive+server "$(median "${iserver[@]}")" "$base" "$dir/interactive-server"
    row "inliner/$kind" "$m" plugin "$(median "${plugin[@]}")" "$base" "$dir/plugin"
    row "inliner/$kind" "$m" plugin+server "$(median "${pserver[@]}")" "$base" "$dir/plugin-server"
    # What no server removes: plain opt+llc without its start-ups and
    # without llc's reading back of opt's output.
    up=$(median "${startup[@]}")
    back=$(echo "$(median "${reads[@]}") - $(median "${reads0[@]}")" | bc -l)
    row "inliner/$kind" "$m" "start-up only" "$up" "$base"
    row "inliner/$kind" "$m" "read-back" "$back" "$base"
    row "inliner/$kind" "$m" "compile floor" "$(echo "$base - $up - $back" | bc -l)" "$base"
    for f in "$dir"/plugin/logs/*.log; do # every mode's logs are the same bytes
      for other in interactive interactive-server plugin-server; do
        cmp -s "$f" "$dir/$other/logs/${f##*/}" || { echo "bench: ${f##*/} differs in $other" >&2; exit 1; }
      done
    done
  done

  [[ " $problems " == *" regalloc "* ]] || continue
  dir=$work/regalloc_$n
  generate_regalloc "$n" "$dir"
  plain=() evict=() eserver=() pevict=() pserver=()
  for ((r = 0; r < rounds; r++)); do
    plain+=("$(timed plain_llc "$dir")")
    evict+=("$(timed harvest "$dir" out --problem=regalloc-evict --compiler=llc --policy=random:0.5:1 --compile_server=off)")
    eserver+=("$(timed harvest "$dir" server --problem=regalloc-evict --compiler=llc --policy=random:0.5:1 --compile_server=on)")
    pevict+=("$(timed harvest "$dir" plugin --problem=regalloc-evict --compiler=llc --policy=default --mode=plugin --compile_server=off)")
    pserver+=("$(timed harvest "$dir" plugin-server --problem=regalloc-evict --compiler=llc --policy=default --mode=plugin --compile_server=on)")
  done
  base=$(median "${plain[@]}")
  row regalloc "$n" plain-llc "$base" "$base"
  row regalloc "$n" interactive "$(median "${evict[@]}")" "$base" "$dir/out"
  row regalloc "$n" interactive+server "$(median "${eserver[@]}")" "$base" "$dir/server"
  row regalloc "$n" plugin-default "$(median "${pevict[@]}")" "$base" "$dir/plugin"
  row regalloc "$n" plugin-default+server "$(median "${pserver[@]}")" "$base" "$dir/plugin-server"
  for f in "$dir"/plugin/logs/*.log; do # the server's default traces are the exec'd llc's bytes
    cmp -s "$f" "$dir/plugin-server/logs/${f##*/}" || { echo "bench: ${f##*/} differs in plugin-server" >&2; exit 1; }
  done
done
