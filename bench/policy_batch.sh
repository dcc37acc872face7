#!/usr/bin/env bash
# Benchmark: batch policy evaluation (harvest-logs --policies, one baseline
# compile per module for the batch) against K separate harvests, each of
# which compiles every module's baseline again (no cache), as an
# evolution-strategies step without a cache would. Same corpus (the
# generated C corpus of bench/harvest.sh), same sample, same cores
# (--num_workers=2), compile server on for both.
#
# usage: bench/policy_batch.sh [K] [N]     (default: 16 policies, 200 modules)
# The K policies are the inliner network of tests/e2e/tflite_models.py
# (python3-numpy, python3-flatbuffers) with K seeds. Kind inliner_echo (the
# default): the network is evaluated at every decision, then its decision is
# forced to the default heuristic's, as a converged policy's perturbations
# decide mostly alike; each policy compile then costs about one baseline.
# MLGO_BENCH_POLICY_KIND=inliner: the raw random-weight networks, which
# inline 4-7x more code, so that a policy compile costs 2-3 baselines and
# the batch saves less.
# Environment: MLGO_BUILD_DIR (default: build).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/harvest-logs" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
k=${1:-16}
n=${2:-200}
work=$root/bench/.work
dir=$work/harvest_c_$n
[ -f "$dir/corpus/corpus_description.json" ] ||
  { echo "bench: run bench/harvest.sh $n first (it generates the corpus)" >&2; exit 1; }
batch=$work/policy_batch_${k}x$n
rm -rf "$batch" && mkdir -p "$batch/models"
# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"

# The policies' input features: a default harvest's log header.
"$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$batch/features-run" --sampling_rate=0.02 --num_workers=2
log=$(ls "$batch"/features-run/logs/*.log | head -1)
head -1 "$log" | python3 -c '
import json, sys
header = json.loads(sys.stdin.readline())  # the log header: the features the models read
print(json.dumps({"features": [{"name": f["name"], "type": f["type"], "shape": f["shape"]} for f in header["features"]]}))
' > "$batch/features.json"
list=
for ((i = 0; i < k; i++)); do
  /usr/bin/python3 "$root/tests/e2e/tflite_models.py" "${MLGO_BENCH_POLICY_KIND:-inliner_echo}" "$batch/features.json" "$batch/models/p$i" --seed $((i + 1))
  list+=${list:+,}tflite:$batch/models/p$i
done

echo "bench: $k separate harvests of $n modules (each compiles its baselines)..." >&2
t0=$(now)
for ((i = 0; i < k; i++)); do
  "$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$batch/separate/$i" --num_workers=2 \
    --compile_server=on --policy="tflite:$batch/models/p$i"
done
t1=$(now)
echo "bench: one batch of $k policies..." >&2
"$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$batch/batch" --num_workers=2 --compile_server=on \
  --policies="$list"
t2=$(now)
separate=$(echo "$t1 - $t0" | bc -l)
together=$(echo "$t2 - $t1" | bc -l)
# The batch's cells are the separate harvests' records.
python3 - "$batch" "$k" <<'PY'
import json, sys
batch, k = sys.argv[1], int(sys.argv[2])
cells = [json.loads(l) for l in open(f"{batch}/batch/evaluation.jsonl")]
for c in cells:
    i = c["policy_index"]
    records = {}
    for line in open(f"{batch}/separate/{i}/harvest.jsonl"):
        r = json.loads(line)
        if "module" in r:
            records[r["module"]] = r
    r = records[c["module"]]
    for key in ("status", "native_size", "default_size", "reward", "decisions"):
        if c[key] != r[key]:
            sys.exit(f"bench: policy {i} module {c['module']}: {key} {c[key]} in the batch, {r[key]} alone")
PY
printf '%-28s %-10s %-7s\n' run seconds ratio
printf '%-28s %-10.2f %-7.3f\n' "$k separate harvests" "$separate" 1
printf '%-28s %-10.2f %-7.3f\n' "--policies (batch of $k)" "$together" "$(echo "$together / $separate" | bc -l)"
