#!/usr/bin/env bash
# End to end: build the Debian packages with cpack, install them into the real
# system with dpkg -i, run every installed tool's --version and a real job
# from /usr/bin, check the man pages, then remove the packages with dpkg -r
# and check that nothing they installed is left.
# usage: package_test.sh BUILD_DIR CLANG      (root only; exit 77 = skipped)
set -euo pipefail
build=$1 clang=$2
tools=(extract-ir make-corpus combine-training-corpus validate-corpus harvest-logs training-log merge-harvest mlgo-policy compare-harvests mlgo-ir2vec export-decisions)
aliases=(extract_ir make_corpus combine_training_corpus)

if [ "$(id -u)" -ne 0 ] || ! command -v dpkg >/dev/null; then
  echo "SKIP: needs root and dpkg to install a package into the system"; exit 77
fi
for p in mlgo-corpus mlgo-corpus-dev python3-mlgo-corpus; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    echo "SKIP: $p is already installed on this machine; not touching it"; exit 77
  fi
done

work=$(mktemp -d)
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then dpkg -r python3-mlgo-corpus mlgo-corpus-dev mlgo-corpus >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/packages" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; echo "FAIL: cpack" >&2; exit 1; }
version=$(awk -F'"' '/^set\(CPACK_PACKAGE_VERSION /{print $2}' "$build/CPackConfig.cmake")
arch=$(dpkg --print-architecture)
deb=$work/packages/mlgo-corpus_${version}_${arch}.deb
dev=$work/packages/mlgo-corpus-dev_${version}_${arch}.deb
py=$work/packages/python3-mlgo-corpus_${version}_${arch}.deb
for f in "$deb" "$dev" "$py"; do [ -f "$f" ] || { ls "$work/packages" >&2; echo "FAIL: no $(basename "$f")" >&2; exit 1; }; done

# Depends must name what the binaries really link (dpkg-shlibdeps).
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libllvm22 libtbb libstdc++6 libc6; do
  grep -q "$lib" <<<"$depends" || { echo "FAIL: Depends lacks $lib" >&2; exit 1; }
done

pydepends=$(dpkg-deb -f "$py" Depends)
echo "python3-mlgo-corpus Depends: $pydepends"
for lib in python3-numpy libllvm22 libtbb; do
  grep -q "$lib" <<<"$pydepends" || { echo "FAIL: python3-mlgo-corpus Depends lacks $lib" >&2; exit 1; }
done

installed=1
dpkg -i "$deb" "$dev" "$py" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; echo "FAIL: dpkg -i" >&2; exit 1; }
files=$(dpkg -L mlgo-corpus mlgo-corpus-dev python3-mlgo-corpus | sort -u)

for t in "${tools[@]}" "${aliases[@]}"; do
  out=$("/usr/bin/$t" --version)
  grep -q "version $version" <<<"$out" || { echo "FAIL: /usr/bin/$t --version: $out" >&2; exit 1; }
done
for t in "${tools[@]}" "${aliases[@]}"; do
  page=$(man -w "$t") || { echo "FAIL: man -w $t finds nothing" >&2; exit 1; }
  case "$page" in /usr/share/man/man1/*) ;; *) echo "FAIL: man page of $t is $page" >&2; exit 1 ;; esac
done
[ -f /usr/share/doc/mlgo-corpus/README.md ] || { echo "FAIL: no docs installed" >&2; exit 1; }
[ -n "$(find /usr/lib -path '*cmake/mlgo/mlgoConfig.cmake')" ] || { echo "FAIL: no CMake package" >&2; exit 1; }

# One real job with the installed tools only.
mkdir -p "$work/src" "$work/objs"
printf 'static int sq(int x) { return x * x; }\nint add(int a, int b) { return sq(a) + sq(b); }\n' >"$work/src/a.c"
printf 'int add(int, int);\nint twice(int x) { return add(x, x); }\n' >"$work/src/b.c"
# Bitcode before LLVM's passes, as a corpus for training holds it: a.c's calls
# to sq are still there for the harvest's inliner to decide.
for f in a b; do "$clang" -c -O1 -Xclang -disable-llvm-passes -fembed-bitcode=all "$work/src/$f.c" -o "$work/objs/$f.o"; done
/usr/bin/extract_ir --input="$work/objs" --input_type=directory --output_dir="$work/corpus" >/dev/null 2>&1
/usr/bin/validate-corpus "$work/corpus" >"$work/validate.txt" || { cat "$work/validate.txt" >&2; echo "FAIL: validate" >&2; exit 1; }
modules=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["modules"]))' "$work/corpus/corpus_description.json")
[ "$modules" = 2 ] || { echo "FAIL: the installed extract_ir made $modules modules, expected 2" >&2; exit 1; }
grep -q '"mlgo_version": "mlgo-corpus '"$version" "$work/corpus/.mlgo-corpus/extract_ir.report.json" ||
  { echo "FAIL: the report does not record the version" >&2; exit 1; }

# The Python package from Debian's python3 path (no PYTHONPATH, outside the
# build tree) reads the corpus and a harvest of it made by the installed tools.
/usr/bin/harvest-logs --progress_interval=0 --corpus="$work/corpus" --output_dir="$work/harvest" >"$work/harvest.log" 2>&1 ||
  { cat "$work/harvest.log" >&2; echo "FAIL: the installed harvest-logs" >&2; exit 1; }
(cd "$work" && env -u PYTHONPATH /usr/bin/python3 - "$work/corpus" "$work/harvest" <<'EOF'
import sys
import mlgo_corpus
assert mlgo_corpus.__file__.startswith("/usr/lib/python3/dist-packages/mlgo_corpus/"), mlgo_corpus.__file__
corpus = mlgo_corpus.Corpus(sys.argv[1])
assert len(corpus) == 2, corpus
harvest = mlgo_corpus.Harvest(sys.argv[2])
logged = [m for m in harvest if m.log_path]
assert logged, harvest
for m in logged:
    assert len(m.read_log()) == m.decisions, m
print("python3-mlgo-corpus: %d modules, %d logs read" % (len(harvest), len(logged)))
EOF
) || { echo "FAIL: the installed Python package" >&2; exit 1; }

# The shipped inliner-for-size policy, as a user deploys it: the stock clang
# with the installed plugin and model, no harvest; it logs what it decided.
model=/usr/share/mlgo-corpus/models/inliner-oz
[ -f "$model/model.tflite" ] && [ -f "$model/output_spec.json" ] && [ -f "$model/README.md" ] ||
  { echo "FAIL: the shipped policy is not installed in $model" >&2; exit 1; }
"$clang" -Oz -c -fpass-plugin=/usr/lib/mlgo-corpus/libMLGOInlineAdvisor.so -mllvm -mlgo-inliner-policy=tflite:"$model" \
  -mllvm -mlgo-inliner-log="$work/shipped.log" "$work/src/a.c" -o "$work/shipped.o" ||
  { echo "FAIL: clang with the installed plugin and the shipped policy" >&2; exit 1; }
/usr/bin/mlgo-policy eval "$model" --log "$work/shipped.log" >"$work/shipped.eval" ||
  { echo "FAIL: mlgo-policy eval of the shipped policy" >&2; exit 1; }
# And the policy that deviates from -Oz only where it expects a gain (it
# reads the default's decision and cost margin, which the plugin feeds).
deviate=/usr/share/mlgo-corpus/models/inliner-oz-deviate
[ -f "$deviate/model.tflite" ] && [ -f "$deviate/output_spec.json" ] && [ -f "$deviate/README.md" ] ||
  { echo "FAIL: the deviating policy is not installed in $deviate" >&2; exit 1; }
"$clang" -Oz -c -fpass-plugin=/usr/lib/mlgo-corpus/libMLGOInlineAdvisor.so -mllvm -mlgo-inliner-policy=tflite:"$deviate" \
  "$work/src/a.c" -o "$work/deviate.o" ||
  { echo "FAIL: clang with the installed plugin and the deviating policy" >&2; exit 1; }

dpkg -r python3-mlgo-corpus mlgo-corpus-dev mlgo-corpus >"$work/dpkg-r.log" 2>&1 || { cat "$work/dpkg-r.log" >&2; echo "FAIL: dpkg -r" >&2; exit 1; }
installed=0
left=0
while IFS= read -r f; do
  [ -n "$f" ] || continue
  if [ -L "$f" ] || { [ -e "$f" ] && [ ! -d "$f" ]; }; then echo "left behind: $f" >&2; left=1; fi
  # A directory only we created must be gone too.
  case "$f" in /usr/share/mlgo-corpus*|/usr/share/doc/mlgo-corpus*|/usr/share/doc/python3-mlgo-corpus*|/usr/include/mlgo*|*/cmake/mlgo*|*/dist-packages/mlgo_corpus*) [ ! -e "$f" ] || { echo "left behind: $f" >&2; left=1; } ;; esac
done <<<"$files"
[ "$left" = 0 ] || { echo "FAIL: dpkg -r left files behind" >&2; exit 1; }
if dpkg-query -W -f='${Status}' mlgo-corpus 2>/dev/null | grep -q "ok installed"; then
  echo "FAIL: mlgo-corpus still installed" >&2; exit 1
fi
echo "PASS: packages built, installed, used, and removed without a trace ($(wc -l <<<"$files") paths)"
