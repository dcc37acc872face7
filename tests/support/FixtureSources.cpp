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

} // namespace mlgo::test
