#!/usr/bin/env bash
# Benchmark: sharded harvesting.
#
#   bench/slurm.sh [MODULES] [SHARDS] [REAL_MODULES]     (default: 2000 16 48)
#
# 1. merge-harvest on the output of a MODULES-module harvest split into
#    SHARDS shards: wall-clock and peak RSS (GNU time), with --tfrecord, with
#    and without --link, against the baseline of copying the same logs/ trees
#    (cp -r). To keep this runnable in minutes, the shards are synthesized:
#    REAL_MODULES real modules are harvested once (harvest-logs, real opt-22
#    logs), and the MODULES-module corpus holds copies of them under other
#    names (r<k>/m<i>); each copy's log and journal line are the real ones,
#    placed in the shard that harvest-logs --shard=I/SHARDS assigns it (size
#    largest first, ties by name).
# 2. The Slurm test's shape: the REAL_MODULES-module harvest as a 4-task
#    array job (-c 1 each) plus the dependent merge on a local single-node
#    Slurm (scripts/slurm/local-cluster.sh; needs root), against the same
#    harvest in one harvest-logs process with as many workers as CPUs.
# Corpora: C modules compiled with clang-22 -Oz -Xclang -disable-llvm-passes
# (8-27 leaves, 10-49 callers of 6 calls each), kept in bench/.work.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/merge-harvest" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
modules=${1:-2000} shards=${2:-16} real_modules=${3:-48}
work=$root/bench/.work/slurm
mkdir -p "$work"
cpus=$(nproc)

generate() { # N DIR
  local n=$1 dir=$2
  [ -f "$dir/corpus/corpus_description.json" ] && return
  rm -rf "$dir" && mkdir -p "$dir/src" "$dir/bc"
  for ((i = 0; i < n; i++)); do
    local leaves=$((8 + i % 20)) mids=$((10 + (i * 7) % 40))
    {
      echo "static int table[256];"
      for ((f = 0; f < leaves; f++)); do
        echo "static int leaf$f(int x) { return (x * $((f + 3))) ^ table[x & 255]; }"
      done
      for ((f = 0; f < mids; f++)); do
        printf 'int mid%d_%d(int x) { return 0' "$f" "$i"
        for ((k = 0; k < 6; k++)); do printf ' + leaf%d(x + %d)' $(((f * 7 + k) % leaves)) "$k"; done
        echo "; }"
      done
    } >"$dir/src/m$i.c"
  done
  echo "bench: compiling $n modules..." >&2
  (cd "$dir" && ls src | sed 's/\.c$//' |
    xargs -P"$cpus" -I{} clang-22 -Oz -Xclang -disable-llvm-passes -emit-llvm -c src/{}.c -o bc/{}.bc)
  "$bin/make-corpus" -q --input_dir="$dir/bc" --output_dir="$dir/corpus"
}

seconds() { # prints the wall-clock seconds of "$@"
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}'
}
calc() { awk "BEGIN {printf \"%.2f\", $1}"; }

# --- the real harvest ---------------------------------------------------------
small=$work/real-$real_modules
generate "$real_modules" "$small"
rm -rf "$small/one" "$small/run" "$small/cluster" "$small/one.tfrecord"
one_s=$(seconds "$bin/harvest-logs" -q --num_workers="$cpus" --corpus="$small/corpus" --output_dir="$small/one" \
  --tfrecord="$small/one.tfrecord")

# --- 1. the merge -------------------------------------------------------------
big=$work/merge-$modules-$shards
rm -rf "$big"
python3 - "$small" "$big" "$modules" "$shards" <<'PY'
import json, os, shutil, sys
small, big, count, shards = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
real = json.load(open(f"{small}/corpus/corpus_description.json"))["modules"]
lines = {json.loads(l)["module"]: l for l in open(f"{small}/one/harvest.jsonl") if "module" in json.loads(l)}
summary = json.load(open(f"{small}/one/summary.json"))
copies = [(f"r{k}/{name}", name) for k in range(count // len(real) + 1) for name in real][:count]
for new, old in copies:
    os.makedirs(os.path.dirname(f"{big}/corpus/{new}"), exist_ok=True)
    os.link(f"{small}/corpus/{old}.bc", f"{big}/corpus/{new}.bc")
json.dump({"has_thinlto": False, "modules": [n for n, _ in copies]}, open(f"{big}/corpus/corpus_description.json", "w"))
size = {n: os.path.getsize(f"{big}/corpus/{n}.bc") for n, _ in copies}
plan = sorted(copies, key=lambda c: (-size[c[0]], c[0]))
for i in range(shards):
    out = f"{big}/shards/shard-{i}"
    os.makedirs(f"{out}/logs")
    with open(f"{out}/harvest.jsonl", "w") as journal:
        for new, old in plan[i::shards]:
            line = json.loads(lines[old])
            line["module"] = new
            journal.write(json.dumps(line, separators=(",", ":")) + "\n")
            if os.path.exists(f"{small}/one/logs/{old}.log"):
                os.makedirs(os.path.dirname(f"{out}/logs/{new}.log"), exist_ok=True)
                shutil.copyfile(f"{small}/one/logs/{old}.log", f"{out}/logs/{new}.log")
    json.dump(dict(summary, shard=f"{i}/{shards}"), open(f"{out}/summary.json", "w"), indent=2)
PY
dirs=()
for ((i = 0; i < shards; i++)); do dirs+=("$big/shards/shard-$i"); done
logs_mb=$(du -sm --apparent-size "$big"/shards/shard-*/logs | awk '{s += $1} END {print s}')

rm -rf "$big/copy"
mkdir -p "$big/copy"
copy_s=$(seconds bash -c 'for d in "$@"; do cp -r "$d/logs" "'"$big"'/copy/$(basename "$d")"; done' _ "${dirs[@]}")
rm -rf "$big/copy"
measure_merge() { # LABEL [flags]: wall-clock and peak RSS of one merge
  local label=$1
  shift
  rm -rf "$big/merged" "$big/trace.tfrecord"
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$work/time.txt" "$bin/merge-harvest" -q --corpus="$big/corpus" \
    --output_dir="$big/merged" --tfrecord="$big/trace.tfrecord" "$@" "${dirs[@]}"
  end=$(date +%s.%N)
  local s rss
  s=$(calc "$end - $start")
  rss=$(tail -1 "$work/time.txt")
  printf '%-22s %8s s %10s MB %10sx\n' "$label" "$s" "$(calc "$rss / 1024")" "$(calc "$s / $copy_s")"
}
tfrecord_mb=
echo
echo "merge of a $modules-module harvest in $shards shards ($logs_mb MB of logs):"
printf '%-22s %10s %13s %11s\n' "" "time" "peak RSS" "vs cp -r"
printf '%-22s %8s s %13s %10sx\n' "cp -r of the logs/" "$copy_s" "" 1.00
measure_merge "merge-harvest"
tfrecord_mb=$(du -m --apparent-size "$big/trace.tfrecord" | cut -f1)
measure_merge "merge-harvest --link" --link
echo "(TFRecord: $tfrecord_mb MB; merged $(wc -l <"$big/merged/harvest.jsonl") journal lines)"

# --- 2. Slurm array vs one process -------------------------------------------
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then
  echo "bench: skipping the Slurm row (needs root, slurm-wlm and munge)" >&2
  exit 0
fi
chmod 0755 "$work" "$small"
conf=$("$root/scripts/slurm/local-cluster.sh" start "$small/cluster")
trap '"$root/scripts/slurm/local-cluster.sh" stop "$small/cluster"' EXIT
export SLURM_CONF=$conf
start=$(date +%s.%N)
out=$(MLGO_BIN_DIR=$bin "$root/scripts/slurm/submit.sh" "$small/corpus" "$small/run" 4 -c 1 -- --progress_interval=0)
array=$(sed -n 's/^harvest array job: \([0-9]*\).*/\1/p' <<<"$out")
merge=$(sed -n 's/^merge job: \([0-9]*\).*/\1/p' <<<"$out")
while [ -n "$(squeue -h -j "$array,$merge")" ]; do sleep 0.2; done
end=$(date +%s.%N)
slurm_s=$(calc "$end - $start")
cmp -s "$small/run/trace.tfrecord" "$small/one.tfrecord" || { echo "bench: the merged TFRecord differs" >&2; exit 1; }
echo
echo "$real_modules modules on $cpus CPUs:"
printf '%-44s %8s s %8s\n' "one harvest-logs process, $cpus workers" "$one_s" "1.00x"
printf '%-44s %8s s %8sx\n' "Slurm: 4-task array (-c 1) + dependent merge" "$slurm_s" "$(calc "$slurm_s / $one_s")"
