// Progress on stderr: a live line on a terminal, a log line every interval
// otherwise. Counters are updated from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace mlgo {

class Progress {
public:
  /// `intervalSeconds` <= 0 turns reporting off.
  Progress(std::string unit, size_t total, double intervalSeconds);
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;
  ~Progress();

  void advance(bool ok) {
    ++Done;
    if (!ok)
      ++Failed;
  }
  /// A second count shown with its own rate, e.g. decisions.
  void count(size_t n, const char *what) {
    Counted += n;
    CountedWhat = what;
  }
  /// Stops the reporter thread and clears the live line.
  void finish();

  /// One status line: "120/400 (30%), 3 failed, 512.0 modules/s, ETA 0:00:01"
  /// (with ", 9100 decisions (6000.0/s)" when counted).
  std::string line() const;

private:
  void run();

  std::string Unit;
  size_t Total;
  std::chrono::duration<double> Interval;
  bool Live;
  std::chrono::steady_clock::time_point Start;
  std::atomic<size_t> Done{0}, Failed{0}, Counted{0};
  std::atomic<const char *> CountedWhat{nullptr};
  std::mutex Mutex;
  std::condition_variable Wake;
  bool Stop = false;
  std::thread Reporter;
};

} // namespace mlgo
