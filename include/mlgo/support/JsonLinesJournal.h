// The journal both extract-ir and harvest-logs keep: JSON Lines, one object
// per finished item, appended as work completes so that an interrupted run
// can be resumed, and rewritten whole ("compacted") when a run completes.
//
// The first line may be a header `{"options": {...}}`: the options that shape
// the output (keys are the tools' flag names). A resumed run compares them
// with its own and refuses a journal written with different ones.
//
// Crash consistency: records are appended with one write() each; a killed
// run can leave one torn final line (no '\n'). The reader skips exactly that
// line; the writer cuts it off before appending, so it can never swallow the
// next record. Any other line that is not a JSON object is an error.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace mlgo {

struct JournalContents {
  std::optional<nlohmann::ordered_json> Options; // the header's "options"
  std::vector<nlohmann::ordered_json> Records;   // every record line, in file order
  std::vector<size_t> RecordLineNumbers;         // Records[i]'s line in the file (1-based)
  std::vector<std::string> RecordTexts;          // Records[i]'s line as written, without '\n'
  bool TornTail = false;                         // a final line without '\n' was skipped
};

/// Reads a journal; a missing file is an empty journal.
llvm::Expected<JournalContents> readJournalFile(llvm::StringRef path);

/// The latest record per `key` (a string field), in order of first appearance.
std::vector<nlohmann::ordered_json> latestPerKey(const std::vector<nlohmann::ordered_json> &records,
                                                 llvm::StringRef key);

/// Compares the journal's options with this run's. A mismatch (or a journal
/// without options, from an older version) is an error naming each differing
/// option with both values; `advice` ends the message (how to start over).
llvm::Error checkJournalOptions(const JournalContents &journal, const nlohmann::ordered_json &options,
                                llvm::StringRef path, llvm::StringRef advice);

/// Writes the header and `records` atomically (temp + rename), replacing `path`.
llvm::Error rewriteJournal(llvm::StringRef path, const nlohmann::ordered_json &options,
                           const std::vector<nlohmann::ordered_json> &records);

/// One JSON line, without throwing on invalid UTF-8 (replaced).
std::string jsonLine(const nlohmann::ordered_json &value);

class JournalAppender {
public:
  JournalAppender() = default;
  JournalAppender(const JournalAppender &) = delete;
  JournalAppender &operator=(const JournalAppender &) = delete;
  ~JournalAppender();

  /// Opens `path` for appending (`truncate`: start empty). A torn final line
  /// is cut off; an empty journal gets the `options` header first.
  llvm::Error open(llvm::StringRef path, bool truncate, const nlohmann::ordered_json &options);
  /// Appends one line, safe from any thread. An error (disk full, I/O) is
  /// returned and remembered: every later append fails with it too.
  llvm::Error append(const nlohmann::ordered_json &record);
  /// Group commit: appended lines are held and written `batch` at a time,
  /// each batch after one syncfs() of the journal's file system, which makes
  /// every file written before it durable (the tools defer their per-file
  /// syncs meanwhile: setSyncDeferred). A killed run loses at most the held
  /// lines: their modules are redone on resume. 0 (the default): every line
  /// is written at once.
  void setGroupCommit(size_t batch);
  /// Writes the held lines (group commit), flushes the journal to disk (when
  /// writes are durable) and closes it.
  llvm::Error close();
  const std::string &path() const { return Path; }

private:
  llvm::Error appendLocked(const std::string &line);
  llvm::Error commitHeldLocked();
  int Fd = -1;
  size_t Batch = 0;
  std::string Held; // lines waiting for the next group commit
  size_t HeldLines = 0;
  std::string Path;
  std::string FirstError;
  std::mutex Mutex;
};

} // namespace mlgo
