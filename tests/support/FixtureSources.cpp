#include "FixtureSources.h"

namespace mlgo::test {

std::string inlinerSource(int leaves, int mids, bool withDriver, const std::string &midSuffix) {
  std::string s = "static int table[256];\n";
  for (int f = 0; f < leaves; ++f)
    s += "static int leaf" + std::to_string(f) + "(int x) { return (x * " + std::to_string(f + 3) +
         ") ^ table[x & 255]; }\n";
  for (int f = 0; f < mids; ++f) {
    s += "int mid" + std::to_string(f) + midSuffix + "(int x) { return 0";
    for (int k = 0; k < 6; ++k)
      s += " + leaf" + std::to_string((f * 7 + k) % leaves) + "(x + " + std::to_string(k) + ")";
    s += "; }\n";
  }
  if (!withDriver)
    return s;
  s += "int top(int x) { int s = 0; for (int k = 0; k < x; ++k) {\n";
  for (int f = 0; f < mids; ++f)
    s += "  s += mid" + std::to_string(f) + midSuffix + "(s + k);\n";
  return s + "} return s; }\n";
}

std::string pressureFunction(const std::string &name, int live) {
  std::string s = "double " + name + "(double *a, int n) {\n";
  for (int i = 0; i < live; ++i)
    s += "  double v" + std::to_string(i) + " = a[" + std::to_string(i) + "] * " + std::to_string(i + 1) + ".5;\n";
  s += "  for (int k = 0; k < n; ++k) {\n";
  for (int i = 0; i < live; ++i)
    s += "    v" + std::to_string(i) + " = v" + std::to_string(i) + " * a[k] + v" + std::to_string((i + 7) % live) +
         ";\n";
  s += "  }\n  return 0";
  for (int i = 0; i < live; ++i)
    s += " + v" + std::to_string(i);
  return s + ";\n}\n";
}

std::vector<std::pair<std::string, std::string>> linkedProgramSources() {
  return {
      {"main", "#include <stdio.h>\n"
               "int vec_sum(const int *v, int n); int vec_max(const int *v, int n);\n"
               "unsigned checksum(const char *s); int fib(int n); void fill(int *v, int n, int seed);\n"
               "int main(int argc, char **argv) {\n"
               "  int v[64]; fill(v, 64, argc + 6);\n"
               "  printf(\"sum %d max %d fib %d crc %u\\n\", vec_sum(v, 64), vec_max(v, 64), fib(20),\n"
               "         checksum(argv[0] ? \"mlgo-corpus\" : \"\"));\n"
               "  return 0;\n"
               "}\n"},
      {"vec", "static int clampi(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }\n"
              "static int sq(int x) { return x * x; }\n"
              "int mix(int a, int b);\n"
              "int vec_sum(const int *v, int n) { int s = 0; for (int i = 0; i < n; ++i) s += clampi(sq(v[i]) % 1000,"
              " 3, 997); return s; }\n"
              "int vec_max(const int *v, int n) { int m = v[0]; for (int i = 1; i < n; ++i) m = mix(m, v[i]) > m ?"
              " mix(m, v[i]) : m; return m; }\n"
              "void fill(int *v, int n, int seed) { for (int i = 0; i < n; ++i) v[i] = mix(seed, i) % 251; }\n"},
      {"util", "static int rot(int x, int k) { return (int)(((unsigned)x << k) | ((unsigned)x >> (32 - k))); }\n"
               "static int step(int a, int b) { return rot(a ^ b, 5) + 0x9e37; }\n"
               "int mix(int a, int b) { int h = step(a, b); h = step(h, a); return h < 0 ? -h : h; }\n"
               "static unsigned upd(unsigned c, unsigned char b) { c ^= b; for (int k = 0; k < 8; ++k) c = (c >> 1)"
               " ^ (0xEDB88320u & -(c & 1)); return c; }\n"
               "unsigned checksum(const char *s) { unsigned c = ~0u; while (*s) c = upd(c, (unsigned char)*s++);"
               " return ~c; }\n"},
      {"fib", "int mix(int a, int b);\n"
              "static int add(int a, int b) { return a + b; }\n"
              "static int fib_step(int *a, int *b) { int t = add(*a, *b); *a = *b; *b = t; return t; }\n"
              "int fib(int n) { int a = 0, b = 1; for (int i = 1; i < n; ++i) fib_step(&a, &b); return b + mix(0, 0)"
              " * 0; }\n"},
  };
}

std::vector<std::pair<std::string, std::string>> mixedDecisionSources(int modules) {
  std::vector<std::pair<std::string, std::string>> sources;
  for (int m = 0; m < modules; ++m) {
    std::string src;
    const int Leaves = 14;
    for (int k = 0; k < Leaves; ++k) {
      int statements = 1 + (k * 7 + m * 3) % 24;
      src += "int leaf" + std::to_string(k) + "(int x) {\n  int s = x;\n";
      for (int i = 0; i < statements; ++i)
        src += "  s = (s * " + std::to_string(3 + i) + ") ^ (x >> " + std::to_string(i % 7) + ");\n";
      src += "  return s;\n}\n";
    }
    for (int j = 0; j < 10; ++j) {
      src += "int caller" + std::to_string(j) + "(int x) {\n  return 0";
      for (int c = 0; c < 4; ++c)
        src += " + leaf" + std::to_string((j * 3 + c * 5 + m) % Leaves) + "(x + " + std::to_string(c) + ")";
      src += ";\n}\n";
    }
    sources.push_back({"mix" + std::to_string(m), src});
  }
  return sources;
}

} // namespace mlgo::test
