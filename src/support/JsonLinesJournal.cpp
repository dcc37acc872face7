#include "mlgo/support/JsonLinesJournal.h"

#include "mlgo/support/BeneathPath.h"

#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/SyncHook.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace mlgo {
namespace {

llvm::Error errnoError(int err, const char *what, const std::string &path) {
  return llvm::createStringError(std::error_code(err, std::generic_category()), "%s %s: %s", what, path.c_str(),
                                 std::strerror(err));
}

bool isHeader(const nlohmann::ordered_json &line) {
  return line.size() == 1 && line.contains("options") && line["options"].is_object();
}

} // namespace

std::string jsonLine(const nlohmann::ordered_json &value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

llvm::Expected<JournalContents> readJournalFile(llvm::StringRef path) {
  JournalContents contents;
  // Never through a link planted at its name (docs/security.md).
  auto buffer = readOwnFile(path);
  if (!buffer) {
    llvm::Error error = buffer.takeError();
    if (consumeIfMissing(error))
      return contents;
    return llvm::createStringError("cannot read journal %s: %s", path.str().c_str(),
                                   llvm::toString(std::move(error)).c_str());
  }
  llvm::StringRef text = (*buffer)->getBuffer();
  size_t lineNumber = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    if (end == llvm::StringRef::npos) {
      contents.TornTail = true; // the append a killed run did not finish
      break;
    }
    llvm::StringRef line = text.take_front(end);
    text = text.drop_front(end + 1);
    ++lineNumber;
    if (line.trim().empty())
      continue;
    nlohmann::ordered_json value;
    try {
      value = nlohmann::ordered_json::parse(line);
    } catch (const nlohmann::json::exception &e) {
      value = nullptr;
    }
    if (!value.is_object())
      return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                     "journal %s, line %zu: not a JSON object (the file was damaged; remove it to "
                                     "start over)",
                                     path.str().c_str(), lineNumber);
    if (lineNumber == 1 && isHeader(value))
      contents.Options = std::move(value["options"]);
    else {
      contents.Records.push_back(std::move(value));
      contents.RecordLineNumbers.push_back(lineNumber);
      contents.RecordTexts.push_back(line.str());
    }
  }
  return contents;
}

std::vector<nlohmann::ordered_json> latestPerKey(const std::vector<nlohmann::ordered_json> &records,
                                                 llvm::StringRef key) {
  std::vector<nlohmann::ordered_json> latest;
  std::map<std::string, size_t> index;
  std::string k = key.str();
  for (const nlohmann::ordered_json &record : records) {
    auto it = record.find(k);
    if (it == record.end() || !it->is_string())
      continue;
    auto [slot, isNew] = index.emplace(it->get<std::string>(), latest.size());
    if (isNew)
      latest.push_back(record);
    else
      latest[slot->second] = record;
  }
  return latest;
}

llvm::Error checkJournalOptions(const JournalContents &journal, const nlohmann::ordered_json &options,
                                llvm::StringRef path, llvm::StringRef advice) {
  if (!journal.Options && journal.Records.empty())
    return llvm::Error::success(); // nothing to resume
  std::string differences;
  if (!journal.Options) {
    differences = " it records no options (an older version wrote it)";
  } else {
    std::map<std::string, std::pair<std::string, std::string>> differ;
    for (const auto &[name, value] : journal.Options->items())
      if (!options.contains(name) || options[name] != value)
        differ[name] = {value.dump(), options.contains(name) ? options[name].dump() : "(none)"};
    for (const auto &[name, value] : options.items())
      if (!journal.Options->contains(name))
        differ[name] = {"(none)", value.dump()};
    if (differ.empty())
      return llvm::Error::success();
    for (const auto &[name, values] : differ)
      differences += " --" + name + " was " + values.first + ", now " + values.second + ";";
    differences.pop_back();
  }
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                 "cannot resume from %s: it was written with other options:%s. %s", path.str().c_str(),
                                 differences.c_str(), advice.str().c_str());
}

llvm::Error rewriteJournal(llvm::StringRef path, const nlohmann::ordered_json &options,
                           const std::vector<nlohmann::ordered_json> &records) {
  std::string text = jsonLine({{"options", options}});
  for (const nlohmann::ordered_json &record : records)
    text += jsonLine(record);
  return writeFileAtomically(path, text);
}

JournalAppender::~JournalAppender() { llvm::consumeError(close()); }

llvm::Error JournalAppender::open(llvm::StringRef path, bool truncate, const nlohmann::ordered_json &options) {
  llvm::consumeError(close());
  Path = path.str();
  FirstError.clear();
  // Never appended through a link planted at its name; a FIFO there cannot
  // block the open.
  Fd = ::open(Path.c_str(),
              O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (truncate ? O_TRUNC : 0), 0644);
  if (Fd < 0 && errno == ELOOP)
    return llvm::createStringError(std::make_error_code(std::errc::too_many_symbolic_link_levels),
                                   "cannot open journal %s: a symbolic link; never followed (docs/security.md)",
                                   Path.c_str());
  if (Fd < 0)
    return errnoError(errno, "cannot open journal", Path);
  // Cut off a torn final line, so the next record starts a line of its own.
  struct stat st;
  if (::fstat(Fd, &st) != 0)
    return errnoError(errno, "cannot read journal", Path);
  off_t end = st.st_size;
  char c = 0;
  while (end > 0 && ::pread(Fd, &c, 1, end - 1) == 1 && c != '\n')
    --end;
  if (end != st.st_size && ::ftruncate(Fd, end) != 0)
    return errnoError(errno, "cannot cut the torn last line of journal", Path);
  if (end == 0) {
    std::lock_guard<std::mutex> lock(Mutex);
    if (llvm::Error e = appendLocked(jsonLine({{"options", options}})))
      return e;
  }
  return llvm::Error::success();
}

llvm::Error JournalAppender::appendLocked(const std::string &line) {
  if (!FirstError.empty())
    return llvm::createStringError(std::make_error_code(std::errc::io_error), "%s", FirstError.c_str());
  if (Fd < 0)
    return llvm::createStringError(std::make_error_code(std::errc::bad_file_descriptor), "journal %s is not open",
                                   Path.c_str());
  const char *cursor = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(Fd, cursor, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      FirstError = "cannot append to journal " + Path + ": " + std::strerror(n < 0 ? errno : ENOSPC);
      return llvm::createStringError(std::make_error_code(std::errc::io_error), "%s", FirstError.c_str());
    }
    cursor += n;
    left -= static_cast<size_t>(n);
  }
  return llvm::Error::success();
}

llvm::Error JournalAppender::append(const nlohmann::ordered_json &record) {
  std::string line = jsonLine(record);
  std::lock_guard<std::mutex> lock(Mutex);
  if (Batch == 0)
    return appendLocked(line);
  if (!FirstError.empty())
    return llvm::createStringError(std::make_error_code(std::errc::io_error), "%s", FirstError.c_str());
  Held += line;
  if (++HeldLines < Batch)
    return llvm::Error::success();
  return commitHeldLocked();
}

void JournalAppender::setGroupCommit(size_t batch) {
  std::lock_guard<std::mutex> lock(Mutex);
  Batch = batch;
}

llvm::Error JournalAppender::commitHeldLocked() {
  if (HeldLines == 0 || Fd < 0)
    return llvm::Error::success();
  // Everything written to this file system so far (the held lines' files
  // and directories) reaches the disk before any line that names it.
  if (durableWrites() && issueSync(SyncCall::Syncfs, Fd, Path) != 0) {
    FirstError = "cannot flush to disk the file system of journal " + Path + ": " + std::strerror(errno);
    return llvm::createStringError(std::make_error_code(std::errc::io_error), "%s", FirstError.c_str());
  }
  std::string lines = std::move(Held);
  Held.clear();
  HeldLines = 0;
  return appendLocked(lines);
}

llvm::Error JournalAppender::close() {
  std::lock_guard<std::mutex> lock(Mutex);
  if (Fd < 0)
    return llvm::Error::success();
  llvm::Error e = commitHeldLocked();
  // The journal's own last lines, whether or not file syncs are deferred.
  if (!e && durableWrites() && issueSync(SyncCall::Fdatasync, Fd, Path) != 0)
    e = errnoError(errno, "cannot flush to disk", Path);
  if (::close(Fd) != 0 && !e)
    e = errnoError(errno, "cannot finish journal", Path);
  Fd = -1;
  return e;
}

} // namespace mlgo
