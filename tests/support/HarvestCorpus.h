// Generated corpora for harvest tests that need many modules: real clang-22
// bitcode of varied sizes, made into a corpus by the real make-corpus.
#pragma once

#include <string>

namespace mlgo::test {

/// Writes `count` C modules (m0 .. m<count-1>, 8-27 leaf functions and
/// 10-49 functions making six calls each, so every module has dozens to
/// hundreds of inlinable call sites), compiles them with clang-22 -Oz to
/// unoptimized bitcode, and makes `<dir>/corpus`. Returns the corpus path.
std::string makeHarvestCorpus(const std::string &dir, int count);

/// Journal lines of a harvest directory without the `seconds` timing field,
/// in file order, as JSON text.
std::string journalWithoutTimings(const std::string &harvestDir);

/// summary.json without timings (seconds, decisions_per_second,
/// harvester_peak_rss_kb, harvester_cpu_seconds) and without a merge's
/// "merge" section, as JSON text.
std::string summaryWithoutTimings(const std::string &harvestDir);

/// Fails the test unless the logs/ trees of `a` and `b` hold the same files
/// with the same bytes.
void expectSameLogs(const std::string &a, const std::string &b);

} // namespace mlgo::test
