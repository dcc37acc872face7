#!/bin/bash
# Build the 17-project inliner training corpus as models/inliner-oz and
# models/inliner-oz-deviate were trained on: each project configured with
# CMake and compiled as MLGO builds a size corpus (clang-22 -Oz -DNDEBUG,
# the frontend's bitcode embedded), then extract-ir per project and
# combine-training-corpus over them.
#
# usage: build_training_corpus.sh SOURCES OUT [TOOLS_DIR]
#   SOURCES/<project>/ holds each project's sources at the commit the model
#   card names (brotli cJSON fmt jansson libexpat libpng libtomcrypt libuv
#   libxml2 libyaml lz4 pcre2 quickjs tinyxml2 yaml-cpp yyjson zlib).
#   OUT/<project>/ gets each project's corpus, OUT/corpus_description.json
#   the combined one (a source compiled by two targets listed once). TOOLS_DIR holds extract-ir and combine-training-corpus
#   (default: on PATH). Tests, examples and docs are not built.
set -euo pipefail
sources=$(realpath "$1")
out=$(realpath -m "$2")
tools=${3:+$(realpath "$3")/}
flags="-Oz -DNDEBUG -Xclang -fembed-bitcode=all"
mkdir -p "$out" "$out.build"

declare -A subdir=([libexpat]=expat [lz4]=build/cmake)
declare -A options=(
  [brotli]="-DBROTLI_DISABLE_TESTS=ON"
  [cJSON]="-DENABLE_CJSON_TEST=OFF -DENABLE_CJSON_UTILS=ON"
  [fmt]="-DFMT_TEST=OFF -DFMT_DOC=OFF"
  [jansson]="-DJANSSON_BUILD_DOCS=OFF -DJANSSON_WITHOUT_TESTS=ON -DJANSSON_EXAMPLES=OFF"
  [libexpat]="-DEXPAT_BUILD_TESTS=OFF -DEXPAT_BUILD_EXAMPLES=OFF -DEXPAT_BUILD_DOCS=OFF"
  [libpng]="-DPNG_TESTS=OFF"
  [libtomcrypt]="-DBUILD_TESTING=OFF -DWITH_LTM=OFF -DENABLE_CCACHE=OFF"
  [libuv]="-DLIBUV_BUILD_TESTS=OFF -DLIBUV_BUILD_BENCH=OFF"
  [libxml2]="-DLIBXML2_WITH_PYTHON=OFF -DLIBXML2_WITH_ICONV=OFF -DLIBXML2_WITH_LZMA=OFF -DLIBXML2_WITH_ZLIB=OFF -DLIBXML2_WITH_ICU=OFF -DLIBXML2_WITH_TESTS=OFF -DLIBXML2_WITH_READLINE=OFF -DLIBXML2_WITH_HISTORY=OFF"
  [libyaml]="-DBUILD_TESTING=OFF"
  [lz4]=""
  [pcre2]="-DPCRE2_BUILD_TESTS=OFF"
  [quickjs]="-DQJS_BUILD_EXAMPLES=OFF"
  [tinyxml2]="-Dtinyxml2_BUILD_TESTING=OFF"
  [yaml-cpp]="-DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF"
  [yyjson]="-DYYJSON_BUILD_TESTS=OFF"
  [zlib]="-DZLIB_BUILD_EXAMPLES=OFF -DZLIB_BUILD_TESTING=OFF")

for project in brotli cJSON fmt jansson libexpat libpng libtomcrypt libuv \
    libxml2 libyaml lz4 pcre2 quickjs tinyxml2 yaml-cpp yyjson zlib; do
  [ -f "$out/$project/corpus_description.json" ] && continue
  # A target the default build skips (quickjs's unicode_gen) is listed in
  # $out/$project/.mlgo-corpus/extract_ir.report.json, not extracted.
  build="$out.build/$project"
  rm -rf "$build"
  # shellcheck disable=SC2086  # options are word lists
  cmake -S "$sources/$project/${subdir[$project]:-}" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=None -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DBUILD_SHARED_LIBS=OFF ${options[$project]} >"$build.log" 2>&1 ||
    { echo "$project: cmake failed, see $build.log" >&2; exit 1; }
  cmake --build "$build" >>"$build.log" 2>&1 ||
    { echo "$project: build failed, see $build.log" >&2; exit 1; }
  "${tools}extract-ir" --input="$build/compile_commands.json" --input_type=json \
    --output_dir="$out/$project" --progress_interval=0 --quiet
  echo "$project: $(find "$out/$project" -name '*.bc' | wc -l) modules" >&2
done
"${tools}combine-training-corpus" --root_dir="$out"
# A source that two targets of a project compile (a static and a shared
# library, a tool that rebuilds its library's files) is one module: keep
# the first, so that no decision is trained on twice.
python3 - "$out/corpus_description.json" <<'PY'
import json, re, sys
path = sys.argv[1]
with open(path) as f:
    description = json.load(f)
seen, kept = set(), []
for module in description["modules"]:
    key = (module.split("/", 1)[0], re.sub(r"^.*?\.dir/", "", module))
    if key not in seen:
        seen.add(key)
        kept.append(module)
print("%d modules, %d after removing sources compiled twice" % (len(description["modules"]), len(kept)),
      file=sys.stderr)
description["modules"] = kept
with open(path + ".tmp", "w") as f:
    json.dump(description, f, indent=2)
PY
mv "$out/corpus_description.json.tmp" "$out/corpus_description.json"
