#!/usr/bin/env bash
# Sets everything up, builds, and runs every test (unit and end-to-end) with CTest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
build_dir=${MLGO_BUILD_DIR:-$root/build}
# The tflite tests' oracle: TFLite itself, from npm (tests only, never at
# runtime), installed into the build tree and run with the machine's Node.
# Without npm (or without the registry) those tests skip and say why.
oracle=$build_dir/tflite-oracle
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
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" "$@"
