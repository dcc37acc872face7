#!/usr/bin/env bash
# Benchmark: the cost of harvest-logs --link (one linker run per harvest)
# against the same harvest without it, on a linked C program.
#
#   bench/link.sh [N [ROUNDS]]     (default: 40 modules, 3 rounds)
#
# Generates a program of N modules (each a dozen small functions and a
# global one that calls the previous module's, main calling the last),
# compiles it with clang-22 -Oz and embedded bitcode, links it with lld
# through a params file and extracts the corpus from that params file (so
# the corpus records its link order). Then times, alternating, ROUNDS times
# each, into fresh output directories, with --compiler=clang
# --policy=random:0.5:1 --num_workers=2 (a non-default policy, as in
# training): the harvest, and the harvest with
# --link='clang-22 -fuse-ld=lld {objects} -o {output}'. Prints the medians,
# the ratio, and the per-object and linked text of the last --link run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/harvest-logs" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
n=${1:-40}
rounds=${2:-3}
work=$root/bench/.work/link-$n
if [ ! -f "$work/corpus/corpus_description.json" ]; then
  rm -rf "$work" && mkdir -p "$work/src" "$work/objs"
  for ((i = 0; i < n; i++)); do
    {
      [ "$i" -gt 0 ] && echo "int f$((i - 1))(int);"
      for ((k = 0; k < 12; k++)); do echo "static int s$k(int x) { return (x ^ $((k + i))) * $((k + 3)) + (x >> $((k % 5 + 1))); }"; done
      echo "int f$i(int x) {"
      echo "  int a = 0; for (int k = 0; k < 4; ++k) a += s$((i % 12))(x + k) + s$(((i + 5) % 12))(a);"
      for ((k = 0; k < 12; k++)); do echo "  a += s$k(a + $k);"; done
      [ "$i" -gt 0 ] && echo "  a += f$((i - 1))(a & 1023);"
      echo "  return a;"
      echo "}"
    } > "$work/src/m$i.c"
  done
  printf '#include <stdio.h>\nint f%d(int);\nint main(int argc, char **argv) { printf("%%d\\n", f%d(argc)); return 0; }\n' \
    $((n - 1)) $((n - 1)) > "$work/src/main.c"
  echo "bench: compiling $((n + 1)) modules..." >&2
  (cd "$work" && ls src | sed 's/\.c$//' |
    xargs -P"$(nproc)" -I{} clang-22 -Oz -Xclang -fembed-bitcode=all -c src/{}.c -o objs/{}.o)
  { echo -o; echo prog; echo main.o; for ((i = 0; i < n; i++)); do echo "m$i.o"; done; } > "$work/link.params"
  (cd "$work/objs" && clang-22 -fuse-ld=lld main.o $(for ((i = 0; i < n; i++)); do echo "m$i.o"; done) -o ../prog)
  "$bin/extract-ir" -q --input_type=params --input="$work/link.params" --obj_base_dir="$work/objs" \
    --output_dir="$work/corpus"
fi

seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc; }
# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"
harvest() {
  local out=$1; shift
  rm -rf "$out"
  "$bin/harvest-logs" -q --compiler=clang --policy=random:0.5:1 --num_workers=2 --corpus="$work/corpus" \
    --output_dir="$out" "$@"
}
plain=() linked=()
for ((r = 0; r < rounds; r++)); do
  plain+=("$(seconds harvest "$work/plain")")
  linked+=("$(seconds harvest "$work/linked" --link='clang-22 -fuse-ld=lld {objects} -o {output}')")
done
p=$(median "${plain[@]}")
l=$(median "${linked[@]}")
printf 'harvest N=%-4s without --link %7.2fs  with --link %7.2fs  ratio %.3f  (median of %d)\n' \
  "$((n + 1))" "$p" "$l" "$(echo "$l / $p" | bc -l)" "$rounds"
python3 - "$work/linked" <<'PY'
import json, sys
out = sys.argv[1]
s = json.load(open(out + "/summary.json"))
records = [json.loads(l) for l in open(out + "/harvest.jsonl")][1:]
print("per-object text %d bytes over %d modules; linked: %s, text %s, allocated %s, link %.2fs" % (
    sum(r.get("native_size", 0) for r in records), len(records), s["linked"]["status"],
    s["linked"].get("sizes", {}).get("text"), s["linked"].get("sizes", {}).get("allocated"), s["linked"]["seconds"]))
PY
