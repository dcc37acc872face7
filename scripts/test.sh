#!/usr/bin/env bash
# Sets everything up, builds, and runs every test (unit and end-to-end) with CTest.
# --sanitize (or MLGO_SANITIZE=1): the same suite built with clang-22 and
# -fsanitize=address,undefined in its own build directory (build-sanitize,
# or MLGO_SANITIZE_BUILD_DIR), with the fuzz targets' regression inputs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sanitize=${MLGO_SANITIZE:-0}
args=()
for a in "$@"; do
  if [ "$a" = --sanitize ]; then sanitize=1; else args+=("$a"); fi
done
if [ "$sanitize" = 1 ]; then
  export MLGO_BUILD_DIR=${MLGO_SANITIZE_BUILD_DIR:-$root/build-sanitize}
  export MLGO_BUILD_TYPE=Sanitize
  export MLGO_CMAKE_ARGS="-DCMAKE_CXX_COMPILER=clang++-22 -DMLGO_FUZZ=ON"
  # Every finding fails the test that hit it (the tools exit non-zero and
  # print the report on stderr). No suppressions: see docs/fuzzing.md.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
"$root/scripts/setup.sh"
build_dir=${MLGO_BUILD_DIR:-$root/build}
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" "${args[@]}"
