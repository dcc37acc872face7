#!/usr/bin/env bash
# Sets everything up, builds the bundled example C project with embedded
# bitcode, extracts its corpus with extract-ir, shows what it holds, and
# harvests the default inliner's training logs from it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
bin=${MLGO_BUILD_DIR:-$root/build}/bin
example=$root/examples/calc
work=$root/examples/out
rm -rf "$work" && mkdir -p "$work/build"

# Compile like a real build would, and record a compile_commands.json.
echo "[" > "$work/compile_commands.json"
sep=""
for src in main.c parse.c eval.c util/spaces.c; do
  obj=${src%.c}.o
  mkdir -p "$work/build/$(dirname "$obj")"
  args=(clang-22 -O2 -I"$example/include" -Xclang -fembed-bitcode=all -c "$example/src/$src" -o "$obj")
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
echo "== harvest-logs: the default inliner's decisions on every module (opt-22, interactive channel)"
"$bin/harvest-logs" --corpus="$work/corpus" --output_dir="$work/harvest" --tfrecord="$work/harvest/trace.tfrecord"
echo "== training-log stats"
"$bin/training-log" stats "$work/harvest/logs"
echo "== done: corpus in $work/corpus, logs in $work/harvest/logs"
