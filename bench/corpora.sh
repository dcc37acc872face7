# Generated benchmark corpora, shared by the bench/ scripts (sourced; they
# set root, bin and work first). Each generator does nothing when its
# corpus is already there.
# shellcheck shell=bash

generate() { # N DIR
  local n=$1 dir=$2
  [ -f "$dir/corpus/corpus_description.json" ] && return
  rm -rf "$dir" && mkdir -p "$dir/src" "$dir/bc"
  for ((i = 0; i < n; i++)); do
    local leaves=$((8 + i % 30)) mids=$((10 + (i * 7) % 60))
    {
      echo "static int table[256];"
      for ((f = 0; f < leaves; f++)); do
        echo "static int leaf$f(int x) { return (x * $((f + 3))) ^ table[x & 255]; }"
      done
      for ((f = 0; f < mids; f++)); do
        printf 'int mid%d(int x) { return 0' "$f"
        for ((k = 0; k < 6; k++)); do printf ' + leaf%d(x + %d)' $(((f * 7 + k) % leaves)) "$k"; done
        echo "; }"
      done
      echo "int top$i(int x) { int s = 0; for (int k = 0; k < x; ++k) {"
      for ((f = 0; f < mids; f++)); do echo "  s += mid$f(s + k);"; done
      echo "} return s; }"
    } > "$dir/src/m$i.c"
  done
  echo "bench: compiling $n modules..." >&2
  (cd "$dir" && ls src | sed 's/\.c$//' |
    xargs -P"$(nproc)" -I{} clang-22 -Oz -Xclang -disable-llvm-passes -emit-llvm -c src/{}.c -o bc/{}.bc)
  "$bin/make-corpus" -q --input_dir="$dir/bc" --output_dir="$dir/corpus"
}

generate_zstd() { # DIR: a real C library, zstd's lib/ (26 files), from npm's zstd-napi tarball; 1 if unavailable
  local dir=$1
  [ -f "$dir/corpus/corpus_description.json" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir/bc"
  command -v npm >/dev/null || { echo "bench: no npm, so no zstd row" >&2; return 1; }
  (cd "$dir" && timeout 300 npm pack --silent zstd-napi@0.0.13 >/dev/null 2>&1 && tar xzf zstd-napi-0.0.13.tgz) ||
    { echo "bench: cannot fetch zstd-napi from npm, so no zstd row" >&2; return 1; }
  echo "bench: compiling zstd's lib..." >&2
  (cd "$dir/package/deps/zstd/lib" && find . -name '*.c' | sed 's|^\./||; s|\.c$||' |
    xargs -P"$(nproc)" -I{} sh -c 'clang-22 -Oz -Xclang -disable-llvm-passes -emit-llvm -c {}.c -o "$1/$(echo {} | tr / _).bc"' _ "$dir/bc")
  "$bin/make-corpus" -q --input_dir="$dir/bc" --output_dir="$dir/corpus"
}

explore_corpora() { # N: sets `corpora` to "NAME:DIR" entries, the generated C corpus and zstd's lib when it can be had
  generate "$1" "$work/harvest_c_$1"
  corpora=("C, N=$1:$work/harvest_c_$1/corpus")
  if generate_zstd "$work/zstd"; then corpora+=("zstd's lib:$work/zstd/corpus"); fi
}

generate_cxx() { # N DIR: C++ with templates and many small functions
  local n=$1 dir=$2
  [ -f "$dir/corpus/corpus_description.json" ] && return
  rm -rf "$dir" && mkdir -p "$dir/src" "$dir/bc"
  for ((i = 0; i < n; i++)); do
    local fns=$((300 + (i * 13) % 300))
    {
      echo "template <typename T, int N> struct Ops {"
      echo "  static T f(T x) { return x * N + 1; }"
      echo "  static T g(T x) { return Ops<T, N - 1>::f(x) ^ N; }"
      echo "};"
      echo "template <typename T> struct Ops<T, 0> { static T f(T x) { return x; } static T g(T x) { return x; } };"
      echo "template <typename T> inline T clampv(T x, T lo, T hi) { return x < lo ? lo : x > hi ? hi : x; }"
      echo "template <typename T> struct Box { T v; T get() const { return v; } void add(T d) { v += clampv<T>(d, 0, 99); } };"
      for ((f = 0; f < fns; f++)); do
        echo "static int h$f(int x) { return Ops<int, $((f % 16))>::g(x) + clampv(x, 0, $f); }"
      done
      for ((f = 0; f < fns; f++)); do
        echo "int f$f(int x) { Box<long> b{x}; b.add(Ops<long, $((f % 8))>::g(x)); return h$f(x) + h$(((f * 7 + 1) % fns))(x + 1) + static_cast<int>(b.get()); }"
      done
    } > "$dir/src/m$i.cpp"
  done
  echo "bench: compiling $n C++ modules..." >&2
  (cd "$dir" && ls src | sed 's/\.cpp$//' |
    xargs -P"$(nproc)" -I{} clang-22 -x c++ -Oz -Xclang -disable-llvm-passes -emit-llvm -c src/{}.cpp -o bc/{}.bc)
  "$bin/make-corpus" -q --input_dir="$dir/bc" --output_dir="$dir/corpus"
}

generate_regalloc() { # N DIR: modules whose functions keep 24-60 doubles live across a loop
  local n=$1 dir=$2
  [ -f "$dir/corpus/corpus_description.json" ] && return
  rm -rf "$dir" && mkdir -p "$dir/src" "$dir/bc"
  for ((i = 0; i < n; i++)); do
    {
      for ((fn = 0; fn < 3; fn++)); do
        local live=$((24 + 8 * fn + i % 13))
        echo "double f${fn}_$i(double *a, int n) {"
        for ((v = 0; v < live; v++)); do echo "  double v$v = a[$v] * $((v + 1)).5;"; done
        echo "  for (int k = 0; k < n; ++k) {"
        for ((v = 0; v < live; v++)); do echo "    v$v = v$v * a[k] + v$(((v + 7) % live));"; done
        printf '  }\n  return 0'
        for ((v = 0; v < live; v++)); do printf ' + v%d' "$v"; done
        echo ";"
        echo "}"
      done
    } > "$dir/src/r$i.c"
  done
  echo "bench: compiling $n regalloc modules..." >&2
  (cd "$dir" && ls src | sed 's/\.c$//' | xargs -P"$(nproc)" -I{} clang-22 -O2 -emit-llvm -c src/{}.c -o bc/{}.bc)
  "$bin/make-corpus" -q --input_dir="$dir/bc" --output_dir="$dir/corpus"
}

