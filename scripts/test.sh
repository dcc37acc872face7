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
  # A unity build (the library's and tools' sources compiled eight to a
  # file): the instrumented build is CI's longest step, and the normal
  # build still compiles every file on its own (each includes what it uses).
  export MLGO_CMAKE_ARGS="-DCMAKE_CXX_COMPILER=clang++-22 -DMLGO_FUZZ=ON -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8"
  # Every finding fails the test that hit it (the tools exit non-zero and
  # print the report on stderr). No suppressions: see docs/fuzzing.md.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
# The tflite tests' oracle: TFLite itself, from npm (tests only, never at
# runtime), installed once under build/ (the sanitizer build shares it) and
# run with the machine's Node. Without npm (or without the registry) those
# tests skip and say why.
oracle=${MLGO_TFLITE_ORACLE_DIR:-$root/build/tflite-oracle}
# The C fixtures the tests compile with clang-22 (tests/support/FixtureCache.h):
# compiled once, by whichever build's tests need them first.
export MLGO_CMAKE_ARGS="${MLGO_CMAKE_ARGS:-} -DMLGO_TFLITE_ORACLE_DIR=$oracle -DMLGO_TEST_FIXTURE_CACHE=$root/build/test-fixture-cache"
"$root/scripts/setup.sh"
build_dir=${MLGO_BUILD_DIR:-$root/build}
if [ ! -f "$oracle/node_modules/@tensorflow/tfjs-tflite/wasm/tflite_web_api_cc.wasm" ]; then
  if ! command -v npm >/dev/null && [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null || true
  fi
  if command -v npm >/dev/null; then
    timeout 300 npm install --no-audit --no-fund --silent --prefix "$oracle" \
      @tensorflow/tfjs-tflite@0.0.1-alpha.10 @tensorflow/tfjs-core@4.9.0 ||
      echo "test: could not install the TFLite oracle from npm; its tests will skip" >&2
  fi
fi
# compare-harvests' HTML report is checked in a real headless browser
# (Debian's chromium); without it that test skips and says why.
if ! command -v chromium >/dev/null && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
    echo "test: could not install chromium; the HTML rendering test will skip" >&2
fi
# The Python package's torch adapters and export_policy are checked against
# Debian's PyTorch (tests only: the package itself needs only numpy); without
# it those tests skip and say why.
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-torch >/dev/null ||
    echo "test: could not install python3-torch; the torch tests will skip" >&2
fi
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" "${args[@]}"
