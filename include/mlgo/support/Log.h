// Log lines on stderr in the reference tools' `LEVEL:root:message` shape.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <mutex>
#include <optional>

namespace mlgo::log {

enum class Level { Debug = 10, Info = 20, Warning = 30, Error = 40 };

void setLevel(Level level);
Level level();
bool enabled(Level level);

/// Parses DEBUG, INFO, WARNING or ERROR (any case).
std::optional<Level> parseLevel(llvm::StringRef text);

void write(Level level, const llvm::Twine &message);
inline void debug(const llvm::Twine &m) { write(Level::Debug, m); }
inline void info(const llvm::Twine &m) { write(Level::Info, m); }
inline void warning(const llvm::Twine &m) { write(Level::Warning, m); }
inline void error(const llvm::Twine &m) { write(Level::Error, m); }

/// Everything that writes to stderr takes this lock, so a log line never
/// lands in the middle of a progress line.
std::mutex &stderrMutex();

/// The progress reporter registers how to clear its line before a log line.
void setLineClearer(void (*clear)());

} // namespace mlgo::log
