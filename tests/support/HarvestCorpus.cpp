#include "HarvestCorpus.h"

#include "Deadline.h"
#include "FixtureCache.h"
#include "FixtureSources.h"
#include "TestSupport.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace mlgo::test {

std::string makeHarvestCorpus(const std::string &dir, int count) {
  for (int i = 0; i < count; ++i) {
    std::string s = inlinerSource(8 + i % 20, 10 + (i * 7) % 40, /*withDriver=*/false, "_" + std::to_string(i));
    writeFile(dir + "/src/m" + std::to_string(i) + ".c", s);
  }
  // Two at a time, as a build would.
  auto compile = [&](int first) {
    for (int i = first; i < count; i += 2) {
      std::string name = "m" + std::to_string(i);
      compileCached(quote(MLGO_CLANG) + " -Oz -Xclang -disable-llvm-passes -emit-llvm -c src/" + name + ".c -o bc/" +
                        name + ".bc",
                    "src/" + name + ".c", "bc/" + name + ".bc", dir);
    }
  };
  std::thread second(compile, 1);
  compile(0);
  second.join();
  mustRun(tool("make-corpus") + " -q --input_dir=" + quote(dir + "/bc") + " --output_dir=" + quote(dir + "/corpus"));
  return dir + "/corpus";
}

std::string makeNestedHarvestCorpus(const std::string &dir, const std::string &name) {
  makeHarvestCorpus(dir, 2);
  std::filesystem::create_directories(dir + "/nested/sub");
  std::filesystem::copy_file(dir + "/bc/m0.bc", dir + "/nested/sub/m0.bc");
  std::filesystem::copy_file(dir + "/bc/m1.bc", dir + "/nested/m1.bc");
  std::string corpus = dir + "/" + name;
  mustRun(tool("make-corpus") + " -q --input_dir=" + quote(dir + "/nested") + " --output_dir=" + quote(corpus));
  return corpus;
}

std::string makeEmbeddedBitcodeCorpus(const std::string &dir,
                                      const std::vector<std::pair<std::string, std::string>> &sources,
                                      const std::string &clangFlags, ObjectListing listing, const std::string &prefix) {
  const std::string objs = dir + "/" + prefix + "objs", corpus = dir + "/" + prefix + "corpus";
  std::filesystem::create_directories(objs);
  std::string entries;
  for (const auto &[name, source] : sources) {
    writeFile(dir + "/src/" + name + ".c", source);
    std::string cmd = std::string(MLGO_CLANG) + " " + clangFlags + " -Xclang -fembed-bitcode=all -c ../src/" + name +
                      ".c -o " + name + ".o";
    compileCached(cmd, "../src/" + name + ".c", name + ".o", objs);
    entries +=
        std::string(entries.empty() ? "" : ",") + "{\"directory\": \"" + objs + "\", \"command\": \"" + cmd + "\"}";
  }
  if (listing == ObjectListing::CompileCommands) {
    writeFile(dir + "/cc.json", "[" + entries + "]");
    mustRun(tool("extract-ir") + " -q --input=" + quote(dir + "/cc.json") + " --output_dir=" + quote(corpus));
  } else {
    mustRun(tool("extract-ir") + " -q --input_type=directory --input=" + quote(objs) +
            " --output_dir=" + quote(corpus));
  }
  return corpus;
}

std::string makeInlinerCompileDbCorpus(const std::string &dir, int leaves, int mids) {
  std::vector<std::pair<std::string, std::string>> sources;
  for (int i = 1; i <= 4; ++i)
    sources.push_back({"m" + std::to_string(i), inlinerSource(leaves * i, mids * i)});
  return makeEmbeddedBitcodeCorpus(dir, sources, "-Oz", ObjectListing::CompileCommands);
}

TempDir *InlinerCorpusSuite::Fixture = nullptr;

void InlinerCorpusSuite::SetUpTestSuite() {
  Fixture = new TempDir();
  makeInlinerCompileDbCorpus(Fixture->path());
}

void InlinerCorpusSuite::TearDownTestSuite() {
  delete Fixture;
  Fixture = nullptr;
}

TempDir *SmallInlinerCorpusSuite::Fixture = nullptr;

void SmallInlinerCorpusSuite::SetUpTestSuite() {
  Fixture = new TempDir();
  makeInlinerCompileDbCorpus(Fixture->path(), 8, 10);
}

void SmallInlinerCorpusSuite::TearDownTestSuite() {
  delete Fixture;
  Fixture = nullptr;
}

std::string harvestCommand(const std::string &corpus, const std::string &out, const std::string &flags) {
  return tool("harvest-logs") + " --progress_interval=0 --corpus=" + quote(corpus) + " --output_dir=" + quote(out) +
         " " + flags;
}

int killNineOnceJournaled(const std::string &command, const std::string &harvestDir,
                          std::chrono::milliseconds pollInterval) {
  BackgroundCommand harvest(command);
  // The first record, not the options header that a run writes at once.
  bool ended = false;
  EXPECT_TRUE(waitUntil(
      [&] {
        if (readFile(harvestDir + "/harvest.jsonl").find("\"module\"") != std::string::npos)
          return true;
        return ended = harvest.exited();
      },
      GenerousDeadline, "the first module record in " + harvestDir + "/harvest.jsonl", pollInterval));
  EXPECT_FALSE(ended) << "the harvest ended before it journaled a module: " << command;
  harvest.signal(SIGKILL); // the harvester only: its compilers must die with it
  int status = 0;
  EXPECT_TRUE(harvest.wait(GenerousDeadline, status));
  return status;
}

std::vector<nlohmann::json> harvestJournal(const std::string &harvestDir) {
  std::vector<nlohmann::json> records;
  std::istringstream in(readFile(harvestDir + "/harvest.jsonl"));
  for (std::string line; std::getline(in, line);)
    if (auto j = nlohmann::json::parse(line); !j.contains("options")) // skip the header
      records.push_back(std::move(j));
  return records;
}

std::vector<nlohmann::json> harvestJournalWithoutSeconds(const std::string &harvestDir) {
  std::vector<nlohmann::json> records = harvestJournal(harvestDir);
  for (nlohmann::json &j : records)
    j.erase("seconds");
  return records;
}

std::map<std::string, nlohmann::json> journalByModule(const std::string &harvestDir) {
  std::map<std::string, nlohmann::json> byModule;
  for (nlohmann::json &j : harvestJournal(harvestDir)) {
    std::string module = j["module"].get<std::string>(); // before the move: operator= takes its argument by value
    byModule[module] = std::move(j);
  }
  return byModule;
}

nlohmann::json harvestSummary(const std::string &harvestDir) {
  std::string text = readFile(harvestDir + "/summary.json");
  return text.empty() ? nlohmann::json() : nlohmann::json::parse(text);
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
  // How opt and llc were started, not what they produced (a shard whose
  // --opt_path is a wrapper execs them; its logs are the same bytes).
  j.erase("compile_server");
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

std::string cmdFileOf(const std::string &corpus, const std::string &stem) {
  for (const auto &entry : std::filesystem::recursive_directory_iterator(corpus))
    if (entry.path().extension() == ".cmd" && entry.path().stem().string().find(stem) == 0)
      return entry.path().string();
  ADD_FAILURE() << "no .cmd for " << stem << " in " << corpus;
  return "";
}

void appendToCmd(const std::string &corpus, const std::string &stem, const std::vector<std::string> &args) {
  std::string path = cmdFileOf(corpus, stem), bytes = readFile(path);
  for (const std::string &a : args)
    bytes += a + std::string(1, '\0');
  writeFile(path, bytes);
}

} // namespace mlgo::test
