#include "HarvestCorpus.h"
#include <algorithm>

#include "TestSupport.h"

#include <nlohmann/json.hpp>

#include <sstream>

namespace mlgo::test {

std::string makeHarvestCorpus(const std::string &dir, int count) {
  for (int i = 0; i < count; ++i) {
    int leaves = 8 + i % 20, mids = 10 + (i * 7) % 40;
    std::string s = "static int table[256];\n";
    for (int f = 0; f < leaves; ++f)
      s += "static int leaf" + std::to_string(f) + "(int x) { return (x * " + std::to_string(f + 3) +
           ") ^ table[x & 255]; }\n";
    for (int f = 0; f < mids; ++f) {
      s += "int mid" + std::to_string(f) + "_" + std::to_string(i) + "(int x) { return 0";
      for (int k = 0; k < 6; ++k)
        s += " + leaf" + std::to_string((f * 7 + k) % leaves) + "(x + " + std::to_string(k) + ")";
      s += "; }\n";
    }
    writeFile(dir + "/src/m" + std::to_string(i) + ".c", s);
  }
  mustRun("mkdir -p bc && ls src | sed 's/\\.c$//' | xargs -P2 -I{} " + quote(MLGO_CLANG) +
              " -Oz -Xclang -disable-llvm-passes -emit-llvm -c src/{}.c -o bc/{}.bc",
          dir);
  mustRun(tool("make-corpus") + " -q --input_dir=" + quote(dir + "/bc") + " --output_dir=" + quote(dir + "/corpus"));
  return dir + "/corpus";
}

std::string journalWithoutTimings(const std::string &harvestDir) {
  std::istringstream in(readFile(harvestDir + "/harvest.jsonl"));
  // Sorted: a run appends records as modules finish, in no fixed order.
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::ordered_json::parse(line);
    j.erase("seconds");
    lines.push_back(j.dump() + "\n");
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string &line : lines)
    out += line;
  return out;
}

std::string summaryWithoutTimings(const std::string &harvestDir) {
  auto j = nlohmann::ordered_json::parse(readFile(harvestDir + "/summary.json"));
  for (const char *key : {"seconds", "decisions_per_second", "harvester_peak_rss_kb", "harvester_cpu_seconds", "merge"})
    j.erase(key);
  return j.dump(2);
}

void expectSameLogs(const std::string &a, const std::string &b) {
  auto files = listTree(a + "/logs");
  EXPECT_EQ(files, listTree(b + "/logs"));
  size_t logs = 0;
  for (const std::string &file : files)
    if (!file.ends_with("/")) {
      ++logs;
      EXPECT_EQ(readFile(a + "/logs/" + file), readFile(b + "/logs/" + file)) << file;
    }
  EXPECT_GT(logs, 0u);
}

} // namespace mlgo::test
