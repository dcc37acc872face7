#!/usr/bin/env bash
# Benchmark: the native TFLite evaluator (harvest-logs --policy=tflite:DIR).
#
#   bench/tflite.sh [N]     (default: 100 modules)
#
# Generates an N-module inliner corpus (as bench/harvest.sh does), harvests it
# with --policy=default, writes an inliner-shaped policy (tests/e2e/
# tflite_models.py: 999-boundary bucketize per feature, dense 40-40-20-2,
# arg-max) from the logged features, then measures in this run:
#   1. per-decision evaluation cost on the logged feature vectors: ours
#      (mlgo-policy eval --bench) against TFLite itself (the npm
#      @tensorflow/tfjs-tflite WebAssembly build, with Node) on the same model;
#   2. harvest-logs --policy=tflite:DIR against --policy=default, same corpus,
#      same workers (2), in plugin mode (the evaluator inside opt) and in
#      interactive mode (in the harvester), interleaved rounds
#      (MLGO_BENCH_ROUNDS, default 3), medians, with the inliner_echo model: the same network, its
#      arg-max then forced to inlining_default, so both harvests do the same
#      compile work and the difference is the policy's (a random network's
#      decisions would change what opt and llc compile). Each mode's tflite
#      output directory is harvested once untimed, so that its reward's
#      default-size compiles come from the cache the timed rounds share.
# Needs: a build (scripts/setup.sh), python3-flatbuffers, node + the npm
# oracle (scripts/test.sh installs it into the build tree).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MLGO_BUILD_DIR:-$root/build}
bin=$build/bin
[ -x "$bin/harvest-logs" ] && [ -x "$bin/mlgo-policy" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
wasm=$build/tflite-oracle/node_modules/@tensorflow/tfjs-tflite/wasm
n=${1:-100}
rounds=${MLGO_BENCH_ROUNDS:-3}
dir=$root/bench/.work/tflite_$n

work=$root/bench/.work
# shellcheck source=bench/corpora.sh
source "$root/bench/corpora.sh"
generate "$n" "$dir"

# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"
field() { grep -o "\"$1\": [0-9.e+-]*" "$2" | head -1 | grep -o '[0-9.e+-]*$'; }

rm -rf "$dir"/default* "$dir"/tflite*
"$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$dir/default" --policy=default --num_workers=2

# The policy, from the features the compiler logs; observations for the oracle.
log=$(ls "$dir"/default/logs/*.log | head -1)
"$bin/training-log" dump "$log" > "$dir/obs.jsonl"
/usr/bin/python3 - "$log" "$dir/features.json" <<'PY'
import json, sys
header = json.loads(open(sys.argv[1], "rb").readline())
json.dump({"features": header["features"]}, open(sys.argv[2], "w"))
PY
/usr/bin/python3 "$root/tests/e2e/tflite_models.py" inliner "$dir/features.json" "$dir/policy" --seed 1
/usr/bin/python3 "$root/tests/e2e/tflite_models.py" inliner_echo "$dir/features.json" "$dir/echo" --seed 1

ours=$("$bin/mlgo-policy" eval "$dir/policy" --log "$log" --bench)
ours_us=$(echo "$ours" | grep -o '"us_per_decision":[0-9.e+-]*' | cut -d: -f2)
if [ -f "$wasm/tflite_web_api_cc.wasm" ] && command -v node >/dev/null; then
  theirs=$(node "$root/tests/e2e/tflite_oracle.js" "$wasm" "$dir/policy/oracle.tflite" "$dir/obs.jsonl" --bench 2>/dev/null)
  theirs_us=$(echo "$theirs" | grep -o '"us_per_decision":[0-9.e+-]*' | cut -d: -f2)
else
  theirs_us=nan
  echo "bench: no TFLite oracle in $wasm (scripts/test.sh installs it)" >&2
fi

timed_harvest() { # OUT POLICY MODE: seconds of a forced re-harvest into OUT (its default-size cache kept)
  local t0 t1
  t0=$(now)
  "$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$1" --policy="$2" --mode="$3" --num_workers=2 --force
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
echo "per-decision evaluation (inliner-shaped policy, $(grep -c . "$dir/obs.jsonl") logged feature vectors):"
printf '  ours %.2f us   TFLite (npm wasm) %s us   ratio %s\n' "$ours_us" "$theirs_us" \
  "$( [ "$theirs_us" = nan ] && echo nan || printf '%.1fx' "$(echo "$theirs_us / $ours_us" | bc -l)")"
echo "harvest of $n modules, 2 workers, median of $rounds interleaved rounds (tflite: the inliner_echo policy, default's decisions):"
for mode in plugin interactive; do
  # Warm-up: fills the tflite run's default-size cache (its reward's baseline).
  "$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$dir/tflite-$mode" --policy=tflite:"$dir/echo" \
    --mode=$mode --num_workers=2
  d=() t=()
  for ((r = 0; r < rounds; r++)); do
    d+=("$(timed_harvest "$dir/default-$mode" default $mode)")
    t+=("$(timed_harvest "$dir/tflite-$mode" tflite:"$dir/echo" $mode)")
  done
  default_s=$(median "${d[@]}") tflite_s=$(median "${t[@]}")
  dd=$(field decisions "$dir/default-$mode/summary.json")
  td=$(field decisions "$dir/tflite-$mode/summary.json")
  [ "$dd" = "$td" ] || echo "bench: $mode: default made $dd decisions, tflite $td" >&2
  printf '  %-11s default %7.2f s  tflite %7.2f s  %7s decisions  ratio tflite/default %.3f  (%+.2f us/decision)\n' \
    "$mode" "$default_s" "$tflite_s" "$dd" "$(echo "$tflite_s / $default_s" | bc -l)" \
    "$(echo "($tflite_s - $default_s) * 2 * 1000000 / $dd" | bc -l)"
done
