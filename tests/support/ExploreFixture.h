// The fixture of the --explore end-to-end tests (HarvestExploreTest.cpp,
// HarvestRolloutsTest.cpp): a small four-module inliner corpus, harvests of
// it, and what each test reads back (explore.jsonl, certainty, replays).
#pragma once

#include "support/HarvestCorpus.h"
#include "support/LogReading.h"
#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace mlgo::test {

inline const std::vector<std::string> Modules = {"m1.o", "m2.o", "m3.o", "m4.o"};

inline std::vector<nlohmann::json> jsonLines(const std::string &path) {
  std::vector<nlohmann::json> lines;
  std::istringstream text(readFile(path));
  for (std::string line; std::getline(text, line);)
    if (!line.empty())
      lines.push_back(nlohmann::json::parse(line));
  return lines;
}

inline void checkSchema(const std::string &schema, const std::string &file, bool lines) {
  mustRun("/usr/bin/python3 " + quote(std::string(MLGO_SOURCE_DIR) + "/tests/e2e/check_schema.py") +
          (lines ? " --lines " : " ") + quote(std::string(MLGO_SOURCE_DIR) + "/corpus_formats/" + schema) + " " +
          quote(file));
}

// An opt that interrupts the harvest (SIGINT to it, as Ctrl-C would) at
// the first compile of round `round`'s replays, once (`marks`/interrupted),
// and is opt-22 otherwise.
inline std::string interruptingOpt(const std::string &path, const std::string &marks, int round) {
  return writeScript(path, "#!/bin/bash\n"
                           "for a in \"$@\"; do case \"$a\" in -mlgo-inliner-policy=replay:*round-" +
                               std::to_string(round) + "*) if [ ! -e " + quote(marks + "/interrupted") +
                               " ]; then touch " + quote(marks + "/interrupted") +
                               "; kill -INT $PPID; exit 1; fi;; esac; done\n"
                               "exec opt-22 \"$@\"\n");
}

class HarvestExplore : public SmallInlinerCorpusSuite {
protected:
  std::string harvest(const std::string &out, const std::string &flags) {
    return harvestCommand(corpus(), out, "--num_workers=2 " + flags);
  }

  // Each module's kept trajectory, replayed afresh in `mode`, gives its log and size.
  void expectKeptEqualsFreshReplay(const std::string &out, const std::string &mode) {
    std::string kept = Work / ("kept-" + mode + ".jsonl"), replayed = Work / ("replayed-" + mode);
    std::filesystem::remove_all(replayed); // a test may check several explorations
    std::string lines;
    std::map<std::string, nlohmann::json> keptOf;
    for (const nlohmann::json &t : jsonLines(out + "/explore.jsonl"))
      if (t["kept"]) {
        EXPECT_FALSE(keptOf.count(t["module"])) << "two kept trajectories of " << t["module"];
        keptOf[t["module"]] = t;
        lines += nlohmann::json{{"module", t["module"]}, {"decisions", t["decisions"]}}.dump() + "\n";
      }
    ASSERT_EQ(keptOf.size(), Modules.size());
    writeFile(kept, lines);
    mustRun(harvest(replayed, "--mode=" + mode + " --policy=replay:" + quote(kept)));
    auto journal = journalByModule(out), fresh = journalByModule(replayed);
    for (const std::string &m : Modules) {
      ASSERT_EQ(fresh[m]["status"], "ok") << m << fresh[m].dump();
      EXPECT_EQ(fresh[m]["native_size"], keptOf[m]["native_size"]) << m;
      EXPECT_EQ(journal[m]["native_size"], keptOf[m]["native_size"]) << m << ": the journal describes the kept log";
      EXPECT_EQ(journal[m]["decisions"], keptOf[m]["decisions"].size()) << m;
      std::string a = readFile(out + "/logs/" + m + ".log"), b = readFile(replayed + "/logs/" + m + ".log");
      EXPECT_TRUE(a == b) << m << ": the kept log is not the replay's (" << a.size() << " and " << b.size()
                          << " bytes)";
    }
  }

  TempDir Work;
};

inline std::vector<double> marginCertainty(const std::string &sites) {
  std::vector<double> certainty;
  for (const nlohmann::json &site : jsonLines(sites))
    certainty.push_back(site["cost_margin"].is_null() ? std::numeric_limits<double>::infinity()
                                                      : std::fabs(site["cost_margin"].get<double>()));
  return certainty;
}
inline std::vector<double> logitCertainty(const std::string &log) {
  std::vector<double> certainty;
  for (const LoggedObservation &o : readObservations(log)) {
    const std::vector<double> &logits = o.Features.at("inlining_logits");
    certainty.push_back(std::fabs(logits.at(1) - logits.at(0)));
  }
  return certainty;
}
// The first least sure step from `from` on.
inline size_t leastSure(const std::vector<double> &certainty, size_t from) {
  size_t least = from;
  for (size_t s = from + 1; s < certainty.size(); ++s)
    if (certainty[s] < certainty[least])
      least = s;
  return least;
}

} // namespace mlgo::test
