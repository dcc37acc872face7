#include "mlgo/support/Log.h"

#include "llvm/ADT/StringExtras.h"

#include <atomic>
#include <cstdio>
#include <string>

namespace mlgo::log {
namespace {
std::atomic<Level> CurrentLevel{Level::Info};
std::atomic<void (*)()> LineClearer{nullptr};

const char *levelName(Level level) {
  switch (level) {
  case Level::Debug:
    return "DEBUG";
  case Level::Info:
    return "INFO";
  case Level::Warning:
    return "WARNING";
  case Level::Error:
    return "ERROR";
  }
  return "INFO";
}
} // namespace

void setLevel(Level level) { CurrentLevel = level; }
Level level() { return CurrentLevel; }
bool enabled(Level level) { return static_cast<int>(level) >= static_cast<int>(CurrentLevel.load()); }

std::optional<Level> parseLevel(llvm::StringRef text) {
  std::string upper = text.upper();
  for (Level l : {Level::Debug, Level::Info, Level::Warning, Level::Error})
    if (upper == levelName(l))
      return l;
  return std::nullopt;
}

std::mutex &stderrMutex() {
  static std::mutex M;
  return M;
}

void setLineClearer(void (*clear)()) { LineClearer = clear; }

void write(Level level, const llvm::Twine &message) {
  if (!enabled(level))
    return;
  std::string line = std::string(levelName(level)) + ":root:" + message.str() + "\n";
  std::lock_guard<std::mutex> lock(stderrMutex());
  if (auto *clear = LineClearer.load())
    clear();
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

} // namespace mlgo::log
