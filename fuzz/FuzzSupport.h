// Shared by the fuzz targets: a private scratch directory, quiet logging,
// and the checks that turn a broken parser contract into a crash libFuzzer
// reports (with the input that caused it).
#pragma once

#include "mlgo/support/Log.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace mlgo::fuzz {

[[noreturn]] inline void contractBroken(const char *check, const std::string &detail, const char *file, int line) {
  std::fprintf(stderr, "\n%s:%d: parser contract broken: %s\n  %s\n", file, line, check, detail.c_str());
  std::abort();
}

#define FUZZ_CHECK(cond, detail)                                                                                       \
  do {                                                                                                                 \
    if (!(cond))                                                                                                       \
      ::mlgo::fuzz::contractBroken(#cond, (detail), __FILE__, __LINE__);                                               \
  } while (0)

/// A directory of this process's own, removed at exit; created on first use.
/// Loaders log at info/warning level; a fuzzer run must stay quiet.
inline const std::string &scratchDir() {
  static const std::string dir = [] {
    log::setLevel(log::Level::Error);
    std::string pattern = (std::filesystem::temp_directory_path() / "mlgo-fuzz-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      contractBroken("mkdtemp", "cannot create a scratch directory", __FILE__, __LINE__);
    static std::string cleanup = pattern;
    std::atexit([] { std::filesystem::remove_all(cleanup); });
    return pattern;
  }();
  return dir;
}

/// Writes `bytes` to `<scratch>/<name>` and returns the path.
inline std::string writeScratch(const std::string &name, const uint8_t *data, size_t size) {
  std::string path = scratchDir() + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out)
    contractBroken("write", "cannot write " + path, __FILE__, __LINE__);
  return path;
}

/// The message of an error the parser returned: a clear error is not empty
/// and names the file it is about (when `mustName` is given).
inline std::string checkedMessage(llvm::Error error, const std::string &mustName, const char *file, int line) {
  std::string message = llvm::toString(std::move(error));
  if (message.empty())
    contractBroken("error message", "an error with an empty message", file, line);
  if (!mustName.empty() && message.find(mustName) == std::string::npos)
    contractBroken("error names its file", "'" + message + "' does not name " + mustName, file, line);
  return message;
}
#define FUZZ_ERROR_MESSAGE(error, mustName) ::mlgo::fuzz::checkedMessage((error), (mustName), __FILE__, __LINE__)

} // namespace mlgo::fuzz
