#!/usr/bin/env bash
# Every tool answers --version (exit 0, even without its required flags) with
# the project version from CMakeLists.txt, the git revision and the LLVM
# version, in the layout of LLVM tools' --version.
# usage: version_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
bin=$1/bin source=$2
version=$(sed -n 's/^project(mlgo-corpus VERSION \([0-9.]*\).*/\1/p' "$source/CMakeLists.txt")
llvm=$(llvm-config-22 --version 2>/dev/null || /usr/lib/llvm-22/bin/llvm-config --version)
revision=$(git -C "$source" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
status=0
for t in extract-ir make-corpus combine-training-corpus validate-corpus harvest-logs training-log merge-harvest mlgo-policy compare-harvests mlgo-ir2vec export-decisions \
         extract_ir make_corpus combine_training_corpus; do
  out=$("$bin/$t" --version) || { echo "FAIL: $t --version exits $?" >&2; status=1; continue; }
  name=$(readlink "$bin/$t" || echo "$t")
  expected="mlgo-corpus:
  $name version $version
  Git revision: $revision"
  [ "$(head -n3 <<<"$out" | sed 's/-dirty$//')" = "$expected" ] || { echo "FAIL: $t --version:"$'\n'"$out" >&2; status=1; }
  grep -qx "  Built against LLVM version $llvm" <<<"$out" || { echo "FAIL: $t --version lacks LLVM $llvm" >&2; status=1; }
done
"$bin/harvest-logs" --version | grep -q "Default compilers: opt-22" || { echo "FAIL: harvest-logs --version lacks its compilers" >&2; status=1; }
[ "$status" = 0 ] && echo "PASS: every tool prints version $version (git $revision, LLVM $llvm)"
exit "$status"
