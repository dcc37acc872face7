#include "mlgo/extract/Journal.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace mlgo {

std::string journalLine(const ModuleOutcome &outcome) {
  nlohmann::ordered_json line;
  line["input"] = outcome.Input;
  if (!outcome.Member.empty())
    line["member"] = outcome.Member;
  line["name"] = outcome.Name;
  line["status"] = statusName(outcome.Status);
  line["reason"] = outcome.Reason;
  line["size"] = outcome.InputSize;
  line["mtime_ns"] = outcome.InputMtimeNs;
  // Paths may hold any bytes; replace rather than throw on invalid UTF-8.
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::vector<ModuleOutcome> readJournal(llvm::StringRef path) {
  std::vector<ModuleOutcome> records;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return records;
  llvm::SmallVector<llvm::StringRef, 0> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    try {
      auto json = nlohmann::json::parse(line);
      ModuleOutcome record;
      record.Input = json.at("input").get<std::string>();
      record.Member = json.value("member", "");
      record.Name = json.at("name").get<std::string>();
      auto status = parseStatus(json.at("status").get<std::string>());
      if (!status)
        continue;
      record.Status = *status;
      record.Reason = json.at("reason").get<std::string>();
      // Numbers out of range would convert to garbage (or undefined behaviour
      // for floats): such a line is not one we wrote.
      const auto &size = json.at("size"), &mtime = json.at("mtime_ns");
      if (!size.is_number_unsigned() || !mtime.is_number_integer() ||
          (mtime.is_number_unsigned() && mtime.get<uint64_t>() > uint64_t(INT64_MAX)))
        continue;
      record.InputSize = size.get<uint64_t>();
      record.InputMtimeNs = mtime.get<int64_t>();
      records.push_back(std::move(record));
    } catch (const nlohmann::json::exception &) {
      continue; // a torn line from a killed run
    }
  }
  return records;
}

JournalWriter::~JournalWriter() { close(); }

llvm::Error JournalWriter::open(llvm::StringRef path, bool truncate) {
  close();
  std::string p = path.str();
  Fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
  if (Fd < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()), "cannot open journal %s: %s",
                                   p.c_str(), std::strerror(errno));
  return llvm::Error::success();
}

void JournalWriter::append(const ModuleOutcome &outcome) {
  std::string line = journalLine(outcome);
  std::lock_guard<std::mutex> lock(Mutex);
  if (Fd < 0)
    return;
  // A lost journal line only costs a redo on resume, so errors are ignored.
  [[maybe_unused]] ssize_t n = ::write(Fd, line.data(), line.size());
}

void JournalWriter::close() {
  std::lock_guard<std::mutex> lock(Mutex);
  if (Fd >= 0)
    ::close(Fd);
  Fd = -1;
}

} // namespace mlgo
