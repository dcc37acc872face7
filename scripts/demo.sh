#!/usr/bin/env bash
# Sets everything up, builds the bundled example C project at -Oz with
# embedded bitcode, extracts its corpus with extract-ir, shows what it holds,
# harvests the default inliner's training logs from it, and summarises them
# (stats, vocab). Only the tools the demo runs are built, not the tests.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MLGO_BUILD_TARGETS="extract-ir validate-corpus harvest-logs training-log" "$root/scripts/setup.sh"
bin=${MLGO_BUILD_DIR:-$root/build}/bin
example=$root/examples/calc
work=$root/examples/out
rm -rf "$work" && mkdir -p "$work/build"

# Compile like a real build would, and record a compile_commands.json.
echo "[" > "$work/compile_commands.json"
sep=""
for src in main.c parse.c eval.c table.c util/spaces.c; do
  obj=${src%.c}.o
  mkdir -p "$work/build/$(dirname "$obj")"
  args=(clang-22 -Oz -I"$example/include" -Xclang -fembed-bitcode=all -c "$example/src/$src" -o "$obj")
  (cd "$work/build" && "${args[@]}")
  printf '%s  {"directory": "%s", "file": "%s", "command": "%s"}' "$sep" "$work/build" "$example/src/$src" "${args[*]}" \
    >> "$work/compile_commands.json"
  sep=$',\n'
done
printf '\n]\n' >> "$work/compile_commands.json"

echo "== extract-ir --input=compile_commands.json --output_dir=corpus"
"$bin/extract-ir" --input="$work/compile_commands.json" --input_type=json --output_dir="$work/corpus"

echo "== corpus_description.json"
cat "$work/corpus/corpus_description.json"; echo
echo "== module files"
(cd "$work/corpus" && find . -path ./.mlgo-corpus -prune -o -type f -printf '%7s  %p\n' | sort -k2)
echo "== the embedded cc1 command line of parse.o (first 12 arguments)"
tr '\0' '\n' < "$work/corpus/parse.o.cmd" | head -12


echo "== validate-corpus"
"$bin/validate-corpus" --summary_only "$work/corpus"
echo "== harvest-logs: the default inliner's decisions on every module (opt-22; --mode=auto: the in-process plugin when it loads)"
"$bin/harvest-logs" --corpus="$work/corpus" --output_dir="$work/harvest" --tfrecord="$work/harvest/trace.tfrecord"
echo "== training-log stats: decisions per module and feature ranges"
"$bin/training-log" stats "$work/harvest/logs"
echo "== training-log vocab: the quantile files a model's feature normalisation reads"
"$bin/training-log" vocab --output_dir="$work/vocab" "$work/harvest/logs"
(cd "$work/vocab" && ls | head -5 && first=$(ls | head -1) &&
  echo "... $(ls | wc -l) files; $first starts: $(head -n 4 "$first" | paste -sd' ') ...")
echo "== done: corpus in $work/corpus, logs in $work/harvest/logs, vocab in $work/vocab"
