#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) and runs each for a fixed time on its
# seed corpus, printing per target the executions, the coverage and any crash
# with its reproducer.
#
# usage: scripts/fuzz.sh [TARGET|all] [SECONDS]     (default: all 60)
# Environment: MLGO_FUZZ_BUILD_DIR (default: build-sanitize, the sanitizer
# suite's directory, so one instrumented library serves both),
# MLGO_FUZZ_ARGS (extra libFuzzer flags), MLGO_FUZZ_PARALLEL (targets run at
# once; default: one per core), MLGO_FUZZ_SKIP_BUILD=1 (use the binaries as
# they are; .ci/run sets it after the sanitizer suite built them).
# The corpus grows in <build>/fuzz/corpus/<target>/; crashes land in
# <build>/fuzz/crashes/<target>/. Exit status 1 when any target crashed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
which=${1:-all}
seconds=${2:-60}
build_dir=${MLGO_FUZZ_BUILD_DIR:-$root/build-sanitize}
targets=(compile_commands linker_params aquery corpus_description object_sections llvmcmd command_line_screen shell_words training_log
  tfrecord journal harvest_journal tflite_model baseline_cache decision_sites inline_decisions ir2vec_vocab mir2vec_vocab openke
  policy_dir bitcode trajectories explored_shards compile_server_protocol regalloc_remarks linked_sections link_order
  native_size thinlto_index channel_header)
if [ "$which" != all ]; then
  printf '%s\n' "${targets[@]}" | grep -qx "$which" || { echo "fuzz: unknown target '$which' (one of: ${targets[*]})" >&2; exit 2; }
  targets=("$which")
fi

if [ "${MLGO_FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  if [ ! -f "$build_dir/CMakeCache.txt" ] || ! grep -q '^MLGO_FUZZ:BOOL=ON' "$build_dir/CMakeCache.txt"; then
    cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_COMPILER=clang++-22 \
      -DMLGO_FUZZ=ON >/dev/null
  fi
  build_targets=()
  for t in "${targets[@]}"; do build_targets+=("fuzz_$t"); done
  cmake --build "$build_dir" --target "${build_targets[@]}" -- -j"$(nproc)" >&2
fi

work=$build_dir/fuzz
rm -rf "$work/seeds"
python3 "$root/fuzz/make_seeds.py" "$work/seeds"

dict_for() {
  case $1 in
  compile_commands | aquery | corpus_description | journal | harvest_journal | ir2vec_vocab | mir2vec_vocab | trajectories | explored_shards | link_order | inline_decisions) echo "$root/fuzz/dict/json.dict" ;;
  linker_params) echo "$root/fuzz/dict/params.dict" ;;
  shell_words) echo "$root/fuzz/dict/shell.dict" ;;
  command_line_screen) echo "$root/fuzz/dict/command_line.dict" ;;
  training_log | channel_header) echo "$root/fuzz/dict/training_log.dict" ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Runs one target; its summary line goes to <work>/<target>.result.
run_target() {
  local t=$1 corpus=$work/corpus/$1 crashes=$work/crashes/$1 log=$work/$1.log dict rc
  mkdir -p "$corpus" "$crashes"
  dict=$(dict_for "$t")
  set +e
  # -timeout: an input that takes 10 s is a hang; -rss_limit_mb bounds memory.
  # shellcheck disable=SC2086
  "$build_dir/bin/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$crashes/" ${dict:+-dict="$dict"} ${MLGO_FUZZ_ARGS:-} "$corpus" "$work/seeds/$t" >"$log" 2>&1
  rc=$?
  set -e
  local execs last edges features units result=ok reproducer
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  edges=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  features=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  units=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  if [ "$rc" -ne 0 ]; then
    reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    result="CRASH (exit $rc): reproducer ${reproducer:-none}; log $log"
  fi
  printf '%-20s %10s %8s %8s %7s  %s\n' "$t" "${execs:-?}" "${edges:-?}" "${features:-?}" "${units:-?}" "$result" \
    >"$work/$t.result"
}

# MLGO_FUZZ_PARALLEL targets at a time (default: one per core).
parallel=${MLGO_FUZZ_PARALLEL:-$(nproc)}
for t in "${targets[@]}"; do
  rm -f "$work/$t.result"
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  run_target "$t" &
done
wait
status=0
printf '%-20s %10s %8s %8s %7s  %s\n' target executions edges features corpus result
for t in "${targets[@]}"; do
  if [ -f "$work/$t.result" ]; then cat "$work/$t.result"; else echo "$t: no result" && status=1; fi
  grep -q CRASH "$work/$t.result" 2>/dev/null && status=1
done
exit $status
