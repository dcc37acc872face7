#!/usr/bin/env bash
# End to end: `cmake --install` into a temporary prefix, then a project of its
# own finds mlgo there with find_package(mlgo CONFIG REQUIRED), links
# mlgo::mlgo, and reads a corpus description and a training log that the real
# tools made from bitcode that the real clang-22 compiled.
# usage: consumer_test.sh BUILD_DIR SOURCE_DIR CLANG
set -euo pipefail
build=$1 source=$2 clang=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$build/bin

cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in include/mlgo/log/TrainingLog.h include/mlgo/corpus/CorpusDescription.h include/mlgo/support/Version.h \
  include/mlgo/compile/CompilerDriver.h include/mlgo/evaluate/NativeSize.h include/mlgo/policy/Policy.h \
  include/mlgo/harvest/Harvester.h include/mlgo/explore/Exploration.h include/mlgo/run/HarvestRun.h \
  include/mlgo/deploy/DecisionExport.h include/mlgo/policy/InlineDecisions.h; do
  [ -f "$work/prefix/$f" ] || { echo "FAIL: cmake --install did not install $f" >&2; exit 1; }
done
config=$(find "$work/prefix" -name mlgoConfig.cmake)
[ -n "$config" ] || { echo "FAIL: no mlgoConfig.cmake installed" >&2; exit 1; }
[ -n "$(find "$work/prefix" -name 'libmlgo.*')" ] || { echo "FAIL: no libmlgo installed" >&2; exit 1; }

# A corpus with real inlining decisions.
mkdir "$work/bc"
cat > "$work/calls.c" <<'C'
static int square(int x) { return x * x; }
static int twice(int x) { return x + x; }
int combine(int a, int b) { return square(a) + twice(b) + square(b); }
int entry(int n) { int s = 0; for (int i = 0; i < n; ++i) s += combine(i, n); return s; }
C
"$clang" -c -emit-llvm -Oz -Xclang -disable-llvm-passes "$work/calls.c" -o "$work/bc/calls.bc"
"$bin/make-corpus" --input_dir "$work/bc" --output_dir "$work/corpus" --default_args="-O2" -q
"$bin/harvest-logs" --corpus="$work/corpus" --output_dir="$work/harvest" --num_workers=1 >/dev/null 2>&1
decisions=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["decisions"])' "$work/harvest/summary.json")
[ "$decisions" -gt 0 ] || { echo "FAIL: the harvest made no decisions" >&2; exit 1; }

cmake -S "$source/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/consumer" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
"$clang" -c -Oz "$work/calls.c" -o "$work/calls.o"
"$work/consumer/mlgo_consumer" "$work/corpus" "$work/harvest/logs/calls.log" "$work/calls.o" >"$work/out.txt"
cat "$work/out.txt"

expect() { # key value
  got=$(awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$work/out.txt")
  [ "$got" = "$2" ] || { echo "FAIL: $1 is '$got', expected '$2'" >&2; exit 1; }
}
expect modules 1
expect observations "$decisions"
expect version "$("$bin/harvest-logs" --version >/dev/null && python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mlgo_version"])' "$work/harvest/summary.json")"
# The header line, read independently of our reader.
expect features "$(head -n1 "$work/harvest/logs/calls.log" | python3 -c 'import json,sys; print(len(json.loads(sys.stdin.readline())["features"]))')"
# The object's text size, as llvm-size counts it.
expect text "$(llvm-size-22 -B "$work/calls.o" | awk 'NR == 2 { print $1 }')"
echo "PASS: consumer built against the installed mlgo read the corpus and a ${decisions}-decision log"
