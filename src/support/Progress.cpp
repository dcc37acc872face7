#include "mlgo/support/Progress.h"

#include "mlgo/support/Log.h"

#include <cstdio>
#include <unistd.h>

namespace mlgo {
namespace {
std::atomic<bool> LineShown{false};
void clearLiveLine() {
  if (LineShown.exchange(false))
    std::fputs("\r\033[K", stderr);
}
} // namespace

Progress::Progress(std::string unit, size_t total, double intervalSeconds)
    : Unit(std::move(unit)), Total(total), Interval(intervalSeconds), Live(::isatty(2) == 1),
      Start(std::chrono::steady_clock::now()) {
  if (intervalSeconds <= 0 || total == 0 || !log::enabled(log::Level::Info))
    return;
  // A terminal gets a live line refreshed often; a log gets a line per interval.
  if (Live) {
    Interval = std::chrono::duration<double>(std::min(intervalSeconds, 0.5));
    log::setLineClearer(clearLiveLine);
  }
  Reporter = std::thread([this] { run(); });
}

Progress::~Progress() { finish(); }

void Progress::finish() {
  {
    std::lock_guard<std::mutex> lock(Mutex);
    Stop = true;
  }
  Wake.notify_all();
  if (Reporter.joinable())
    Reporter.join();
  if (Live) {
    std::lock_guard<std::mutex> lock(log::stderrMutex());
    clearLiveLine();
    log::setLineClearer(nullptr);
  }
}

std::string Progress::line() const {
  size_t done = Done, failed = Failed;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  double rate = seconds > 0 ? done / seconds : 0;
  char buf[200];
  int pct = Total ? static_cast<int>(100.0 * done / Total) : 100;
  std::string eta = "?";
  if (rate > 0) {
    long left = static_cast<long>((Total - done) / rate + 0.5);
    char e[32];
    std::snprintf(e, sizeof(e), "%ld:%02ld:%02ld", left / 3600, left / 60 % 60, left % 60);
    eta = e;
  }
  std::snprintf(buf, sizeof(buf), "%zu/%zu (%d%%), %zu failed, %.1f %s/s, ETA %s", done, Total, pct, failed, rate,
                Unit.c_str(), eta.c_str());
  std::string text = buf;
  if (const char *what = CountedWhat.load()) {
    size_t counted = Counted;
    std::snprintf(buf, sizeof(buf), ", %zu %s (%.1f/s)", counted, what, seconds > 0 ? counted / seconds : 0.0);
    text += buf;
  }
  return text;
}

void Progress::run() {
  std::unique_lock<std::mutex> lock(Mutex);
  while (!Wake.wait_for(lock, Interval, [this] { return Stop; })) {
    if (Live) {
      std::string text = "\r\033[K" + line();
      std::lock_guard<std::mutex> out(log::stderrMutex());
      std::fputs(text.c_str(), stderr);
      std::fflush(stderr);
      LineShown = true;
    } else {
      log::info("progress: " + line());
    }
  }
}

} // namespace mlgo
