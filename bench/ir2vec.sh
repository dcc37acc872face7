#!/usr/bin/env bash
# Benchmark: mlgo-ir2vec and IR2Vec-aware harvests.
#
#   bench/ir2vec.sh [N]        (default: 500 modules; MLGO_BENCH_ROUNDS, default 3)
#
# On the generated C corpus of bench/harvest.sh (bench/corpora.sh), with 2
# workers everywhere, it times (medians of interleaved rounds):
#   triplets:  mlgo-ir2vec triplets (in-process, a seeded opt level per module)
#              against the upstream recipe's approach: per module one opt-22
#              -O<level> and one llvm-ir2vec-22 triplets process (the same
#              levels, xargs -P2), then sort -u of their output;
#   mir:       mlgo-ir2vec triplets --mode=mir against, per module, one opt-22
#              -O<level> | llc-22 -stop-before=greedy | llvm-ir2vec-22 triplets
#              --mode=mir pipeline (the same levels, xargs -P2). LLVM 22.1's
#              llvm-ir2vec-22 --mode=mir crashes on most modules (a register
#              of no class: every call, every SSE instruction) and reads every
#              function in the first one's register info: the row counts its
#              failures and compares the sets only where it finished;
#   train:     mlgo-ir2vec train on those triplets (dim 75, 2000 epochs) against
#              the tests' PyTorch TransE (tests/python/transe_oracle.py, the same
#              model, torch on 1 thread as the test runs it), as triplets/s;
#   harvest:   harvest-logs with --ir2vec_vocab (the trained vocabulary)
#              against the same harvest without.
# Needs python3-torch for the train row (left out without it).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/mlgo-ir2vec" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
work=$root/bench/.work
n=${1:-500}
rounds=${MLGO_BENCH_ROUNDS:-3}
# shellcheck source=bench/corpora.sh
source "$root/bench/corpora.sh"
dir=$work/harvest_c_$n
generate "$n" "$dir"
out=$work/ir2vec_$n
rm -rf "$out" && mkdir -p "$out"

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
timed() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); echo "$t1 - $t0" | bc -l; }

ours_triplets() {
  rm -rf "$out/triplets"
  "$bin/mlgo-ir2vec" triplets --corpus="$dir/corpus" --output_dir="$out/triplets" --seed=1 --num_workers=2 \
    --report="$out/triplets.report.json"
}
process_per_module() { # the levels ours drew, one opt and one llvm-ir2vec per module
  rm -rf "$out/upstream" && mkdir -p "$out/upstream"
  /usr/bin/python3 -c 'import json,sys; [print(m["module"], m["opt_level"]) for m in json.load(open(sys.argv[1]))["modules"]]' \
    "$out/triplets.report.json" |
    D="$dir" U="$out/upstream" xargs -P2 -L1 sh -c 'opt-22 -"$2" "$D/corpus/$1.bc" -o - | llvm-ir2vec-22 triplets - > "$U/$1.txt"' _
  cat "$out"/upstream/*.txt | grep -v '^MAX_RELATION' | sort -u > "$out/upstream.sorted"
}

ours_triplets >/dev/null 2>&1 # the levels the baseline uses, and a warm cache
declare -a tOurs tTheirs
for ((r = 0; r < rounds; r++)); do
  tOurs+=("$(timed ours_triplets)")
  tTheirs+=("$(timed process_per_module)")
done
# Both give the same set.
tail -n +2 "$out/triplets/train2id.txt" | tr ' ' '\t' | sort -u > "$out/ours.sorted"
cmp -s "$out/ours.sorted" "$out/upstream.sorted" || { echo "bench: the two triplet sets differ" >&2; exit 1; }
distinct=$(head -1 "$out/triplets/train2id.txt")
printf '%-34s %-10s %-10s\n' row seconds ratio
printf '%-34s %-10.2f %-10s\n' "triplets: opt+llvm-ir2vec per module" "$(median "${tTheirs[@]}")" 1.000
printf '%-34s %-10.2f %-10.3f   (%s modules, %s distinct triplets)\n' "triplets: mlgo-ir2vec" "$(median "${tOurs[@]}")" \
  "$(echo "$(median "${tOurs[@]}") / $(median "${tTheirs[@]}")" | bc -l)" "$n" "$distinct"

ours_mir() {
  rm -rf "$out/mir"
  "$bin/mlgo-ir2vec" triplets --mode=mir --corpus="$dir/corpus" --output_dir="$out/mir" --seed=1 --num_workers=2 \
    --report="$out/mir.report.json"
}
mir_per_module() { # a module whose llvm-ir2vec-22 fails leaves <module>.failed with the exit status
  rm -rf "$out/upstream-mir" && mkdir -p "$out/upstream-mir"
  /usr/bin/python3 -c 'import json,sys; [print(m["module"], m["opt_level"]) for m in json.load(open(sys.argv[1]))["modules"]]' \
    "$out/mir.report.json" |
    D="$dir" U="$out/upstream-mir" LLVM_DISABLE_SYMBOLIZATION=1 xargs -P2 -L1 sh -c \
      'opt-22 -"$2" "$D/corpus/$1.bc" -o - | llc-22 -stop-before=greedy -o - - |
         llvm-ir2vec-22 triplets --mode=mir - > "$U/$1.txt" 2>/dev/null ||
         { echo $? > "$U/$1.failed"; rm -f "$U/$1.txt"; }' _
}

ours_mir >/dev/null 2>&1
declare -a mOurs mTheirs
for ((r = 0; r < rounds; r++)); do
  mOurs+=("$(timed ours_mir)")
  mTheirs+=("$(timed mir_per_module)")
done
tail -n +2 "$out/mir/train2id.txt" | tr ' ' '\t' | sort -u > "$out/mir-ours.sorted"
find "$out/upstream-mir" -name "*.txt" -exec cat {} + | { grep -v '^MAX_RELATION' || true; } | sort -u > "$out/mir-upstream.sorted"
failed=$(find "$out/upstream-mir" -name '*.failed' | wc -l)
crashed=$(find "$out/upstream-mir" -name "*.failed" -exec cat {} + | awk '$1 >= 128' | wc -l)
foreign=$(comm -13 "$out/mir-ours.sorted" "$out/mir-upstream.sorted" | wc -l)
printf '%-34s %-10.2f %-10s   (llvm-ir2vec-22 failed on %s of %s modules, %s of them crashed)\n' \
  "mir triplets: opt+llc+llvm-ir2vec" "$(median "${mTheirs[@]}")" 1.000 "$failed" "$n" "$crashed"
printf '%-34s %-10.2f %-10.3f   (%s modules, %s distinct triplets; llvm-ir2vec-22 gave %s from its %s finished modules, %s of them not ours)\n' \
  "mir triplets: mlgo-ir2vec" "$(median "${mOurs[@]}")" \
  "$(echo "$(median "${mOurs[@]}") / $(median "${mTheirs[@]}")" | bc -l)" "$n" "$(head -1 "$out/mir/train2id.txt")" \
  "$(wc -l < "$out/mir-upstream.sorted")" "$((n - failed))" "$foreign"
echo "bench: llvm-ir2vec-22 --mode=mir failed on $failed of $n modules (LLVM 22.1: it crashes on a register of no class, as on calls and SSE); its time counts those runs (a crash comes no sooner than a finished run)" >&2

epochs=2000
count=$(head -1 "$out/triplets/train2id.txt")
t=$(timed "$bin/mlgo-ir2vec" train --input_dir="$out/triplets" --output="$out/vocab.json" --dim=75 --epochs=$epochs \
  --num_workers=2)
printf '%-34s %-10.2f %-10s   (%.0f triplets/s)\n' "train: mlgo-ir2vec (2 threads)" "$t" - \
  "$(echo "$count * $epochs / $t" | bc -l)"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  mkdir -p "$out/fold/train"
  cp "$out/triplets/"*.txt "$out/fold/train/" && printf '1\n%s\n' "$(sed -n 2p "$out/triplets/train2id.txt")" > "$out/fold/test2id.txt"
  t=$(timed /usr/bin/python3 "$root/tests/python/transe_oracle.py" 75 $epochs 256 0.01 1.0 1 "$out/fold")
  printf '%-34s %-10.2f %-10s   (%.0f triplets/s)\n' "train: PyTorch TransE (1 thread)" "$t" - \
    "$(echo "$count * $epochs / $t" | bc -l)"
else
  echo "bench: no python3-torch: the PyTorch train row is left out" >&2
fi

declare -a hPlain hEmb
for ((r = 0; r < rounds; r++)); do
  hPlain+=("$(timed "$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$out/plain.$r" --num_workers=2)")
  hEmb+=("$(timed "$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$out/emb.$r" --num_workers=2 \
    --ir2vec_vocab="$out/vocab.json")")
done
printf '%-34s %-10.2f %-10s\n' "harvest" "$(median "${hPlain[@]}")" 1.000
printf '%-34s %-10.2f %-10.3f\n' "harvest --ir2vec_vocab" "$(median "${hEmb[@]}")" \
  "$(echo "$(median "${hEmb[@]}") / $(median "${hPlain[@]}")" | bc -l)"
