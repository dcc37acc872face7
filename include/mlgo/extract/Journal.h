// The extraction journal: one JSON line per finished candidate, appended as
// work completes, so that an interrupted run can be resumed.
#pragma once

#include "mlgo/extract/ModuleOutcome.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <mutex>
#include <string>
#include <vector>

namespace mlgo {

std::string journalLine(const ModuleOutcome &outcome);

/// Reads a journal. A torn last line (from a killed run) is ignored; a
/// missing file is an empty journal.
std::vector<ModuleOutcome> readJournal(llvm::StringRef path);

class JournalWriter {
public:
  JournalWriter() = default;
  JournalWriter(const JournalWriter &) = delete;
  JournalWriter &operator=(const JournalWriter &) = delete;
  ~JournalWriter();

  /// Opens `path` for appending; `truncate` starts a fresh journal.
  llvm::Error open(llvm::StringRef path, bool truncate);
  /// Appends one line with a single write, safe from any thread.
  void append(const ModuleOutcome &outcome);
  void close();

private:
  int Fd = -1;
  std::mutex Mutex;
};

} // namespace mlgo
