#!/usr/bin/env bash
# Submits a sharded harvest to Slurm: an N-task array job (harvest.sbatch,
# shard I into OUT/shard-I) and the merge that runs when every task succeeded
# (merge.sbatch, --dependency=afterok), and prints the job ids and where the
# result will be.
#
#   scripts/slurm/submit.sh CORPUS OUT N [sbatch options...] [-- harvest-logs flags...]
#
# sbatch options (e.g. -p PARTITION -c 8 -t 2:00:00 -A ACCOUNT) go to both
# jobs. harvest-logs flags go to every task; the selection flags among them
# (--modules_filter=, --sampling_rate=, --seed=, given in --flag=value form)
# also go to the merge. Tools: $MLGO_BIN_DIR/harvest-logs and merge-harvest
# when MLGO_BIN_DIR is set, else the ones on PATH. See docs/cluster.md.
set -euo pipefail
usage() {
  echo "usage: $0 CORPUS OUT N [sbatch options...] [-- harvest-logs flags...]" >&2
  exit 2
}
[ $# -ge 3 ] || usage
corpus=$(realpath -m -- "$1") out=$(realpath -m -- "$2") count=$3
shift 3
[[ $count =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: N must be a positive integer, not '$count'" >&2; exit 2; }
[ -f "$corpus/corpus_description.json" ] || { echo "submit.sh: $corpus/corpus_description.json: no such corpus" >&2; exit 1; }
sbatch_options=() harvest_flags=() merge_flags=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do sbatch_options+=("$1"); shift; done
[ $# -gt 0 ] && shift
for flag in "$@"; do
  harvest_flags+=("$flag")
  case $flag in
  --modules_filter=* | --module_filter=* | --sampling_rate=* | --seed=*) merge_flags+=("$flag") ;;
  --modules_filter | --module_filter | --sampling_rate | --seed)
    echo "submit.sh: give $flag as $flag=VALUE (it must also reach the merge)" >&2
    exit 2
    ;;
  esac
done

tool() {
  if [ -n "${MLGO_BIN_DIR:-}" ]; then
    [ -x "$MLGO_BIN_DIR/$1" ] || { echo "submit.sh: no $MLGO_BIN_DIR/$1" >&2; exit 1; }
    echo "$MLGO_BIN_DIR/$1"
  else
    command -v "$1" || { echo "submit.sh: $1 is not on PATH (set MLGO_BIN_DIR)" >&2; exit 1; }
  fi
}
harvest=$(realpath "$(tool harvest-logs)")
merge=$(realpath "$(tool merge-harvest)")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$out/slurm-logs"
export MLGO_HARVEST_LOGS=$harvest MLGO_MERGE_HARVEST=$merge

array=$(sbatch --parsable --array="0-$((count - 1))" --chdir="$out" -o "$out/slurm-logs/harvest-%A_%a.out" \
  "${sbatch_options[@]}" "$here/harvest.sbatch" "$corpus" "$out" "$count" "${harvest_flags[@]}")
array=${array%%;*}
merge_job=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes --chdir="$out" \
  -o "$out/slurm-logs/merge-%j.out" "${sbatch_options[@]}" "$here/merge.sbatch" "$corpus" "$out" "$count" \
  "${merge_flags[@]}")
merge_job=${merge_job%%;*}
echo "harvest array job: $array ($count tasks; shard I in $out/shard-I)"
echo "merge job: $merge_job (runs when every task succeeded)"
echo "result: $out/merged (harvest directory), $out/trace.tfrecord (dataset)"
echo "job output: $out/slurm-logs/"
echo "rerun failed tasks (e.g. 3 and 7): sbatch --array=3,7 --chdir=$out -o '$out/slurm-logs/harvest-%A_%a.out'" \
  "[sbatch options] $here/harvest.sbatch $corpus $out $count [harvest-logs flags]; then merge.sbatch $corpus $out $count"
