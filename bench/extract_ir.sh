#!/usr/bin/env bash
# Benchmark: extract-ir against a floor measured in the same run.
#
#   bench/extract_ir.sh [N ...]     (default: 2000)
#
# For each N, generates an N-object C project, builds it with clang-22 and
# -Xclang -fembed-bitcode=all (cached in bench/.work/), then times, on a warm
# page cache, best of 5 (floors and extract-ir interleaved):
#   objects floor: cp -r of the same object tree (what is read)
#   output floor:  cp -r of the corpus extract-ir writes (what is written:
#                  2 files per module), from a warm copy of that corpus
#   extract-ir:    extract-ir --num_workers=2 over its compile_commands.json,
#                  durable (the default: every file fdatasync'ed before its
#                  journal line) and with --no_fsync (cp's own guarantee)
# writing to disk (bench/.work) and to memory (/dev/shm, when present), and
# prints both ratios and extract-ir's peak RSS. Disk figures on a shared VM
# swing with the host's I/O load: compare the two columns of one run only.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/extract-ir" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
work=$root/bench/.work
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2000)

generate() { # N DIR
  local n=$1 dir=$2
  [ -f "$dir/compile_commands.json" ] && return
  rm -rf "$dir" && mkdir -p "$dir/src" "$dir/build"
  for ((i = 0; i < n; i++)); do
    local sub=d$((i % 20))
    mkdir -p "$dir/src/$sub" "$dir/build/$sub"
    {
      echo "static int table_$i[64];"
      for ((f = 0; f < 12; f++)); do
        echo "static int leaf_${f}(int x) { return (x * $((f + 3))) ^ table_$i[x & 63]; }"
      done
      echo "int entry_$i(int x) { int s = 0; for (int k = 0; k < x; ++k) {"
      for ((f = 0; f < 12; f++)); do echo "  s += leaf_${f}(k + s);"; done
      echo "  } return s; }"
    } > "$dir/src/$sub/m$i.c"
  done
  echo "bench: compiling $n objects..." >&2
  (cd "$dir/build" && find ../src -name '*.c' | sort | sed 's|^\.\./src/||' |
    xargs -P"$(nproc)" -I{} sh -c 'clang-22 -O2 -Xclang -fembed-bitcode=all -c "../src/$1" -o "${1%.c}.o"' _ {})
  (cd "$dir/build" && find . -name '*.o' | sort | sed 's|^\./||' |
    awk -v d="$dir/build" 'BEGIN { print "[" } { printf "%s{\"directory\": \"%s\", \"command\": \"clang-22 -O2 -c ../src/%s -o %s\"}\n", (NR > 1 ? "," : ""), d, substr($0, 1, length($0) - 2) ".c", $0 } END { print "]" }') \
    > "$dir/compile_commands.json.tmp"
  mv "$dir/compile_commands.json.tmp" "$dir/compile_commands.json"
}

# Wall time in seconds of one run of CMD. TARGET is removed and the file
# system synced first, outside the timing: deleting thousands of files
# (ext4 with discard) otherwise slows whatever runs next.
time_once() { # TARGET CMD...
  local target=$1
  shift
  rm -rf "$target" && sync && sleep 1
  local t0 t1
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
min() { if [ -z "$1" ] || [ "$(echo "$2 < $1" | bc -l)" = 1 ]; then echo "$2"; else echo "$1"; fi; }

targets=("disk:$work/out")
[ -d /dev/shm ] && [ -w /dev/shm ] && targets+=("memory:/dev/shm/mlgo-bench-$$")
printf '%-6s %-7s %-10s %-9s %-9s %-10s %-9s %-9s %-12s %-9s %-11s\n' N fs objects_MB cp_obj_s cp_out_s extract_s x_cp_obj \
  x_cp_out no_fsync_s x_cp_obj peak_RSS_MB
for n in "${sizes[@]}"; do
  dir=$work/extract_$n
  generate "$n" "$dir"
  mb=$(du -sm "$dir/build" | cut -f1)
  cat $(find "$dir/build" -name '*.o') > /dev/null # warm the page cache
  for target in "${targets[@]}"; do
    fs=${target%%:*} out=${target#*:}
    mkdir -p "$out"
    floor="" outfloor="" ours="" quick=""
    # The corpus to copy for the output floor, kept warm in the page cache.
    rm -rf "$work/corpus_$n" && "$bin/extract-ir" --num_workers=2 -q --input="$dir/compile_commands.json" \
      --output_dir="$work/corpus_$n" && rm -rf "$work/corpus_$n/.mlgo-corpus"
    cat $(find "$work/corpus_$n" -type f) > /dev/null
    for _ in 1 2 3 4 5; do
      floor=$(min "$floor" "$(time_once "$out/copy" cp -r "$dir/build" "$out/copy")")
      outfloor=$(min "$outfloor" "$(time_once "$out/copy" cp -r "$work/corpus_$n" "$out/copy")")
      ours=$(min "$ours" "$(time_once "$out/corpus" "$bin/extract-ir" --num_workers=2 -q \
        --input="$dir/compile_commands.json" --output_dir="$out/corpus")")
      quick=$(min "$quick" "$(time_once "$out/corpus" "$bin/extract-ir" --num_workers=2 -q --no_fsync \
        --input="$dir/compile_commands.json" --output_dir="$out/corpus")")
    done
    rss=$(rm -rf "$out/corpus" && sync && /usr/bin/time -f %M "$bin/extract-ir" --num_workers=2 -q \
      --input="$dir/compile_commands.json" --output_dir="$out/corpus" 2>&1 >/dev/null | tail -1)
    modules=$(grep -c '^    "' "$out/corpus/corpus_description.json" || true)
    [ "$modules" -eq "$n" ] || echo "bench: expected $n modules, the manifest lists $modules" >&2
    printf '%-6s %-7s %-10s %-9.3f %-9.3f %-10.3f %-9.2f %-9.2f %-12.3f %-9.2f %-11.1f\n' "$n" "$fs" "$mb" "$floor" \
      "$outfloor" "$ours" "$(echo "$ours / $floor" | bc -l)" "$(echo "$ours / $outfloor" | bc -l)" "$quick" \
      "$(echo "$quick / $floor" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
    rm -rf "$out"
  done
done
