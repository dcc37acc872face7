#!/usr/bin/env bash
# Sets everything up, builds, and runs every test (unit and end-to-end) with CTest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
build_dir=${MLGO_BUILD_DIR:-$root/build}
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" "$@"
