#include "mlgo/support/Watchdog.h"

#include "mlgo/support/Interrupt.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <pthread.h>
#include <set>
#include <thread>

namespace mlgo {

// Started on first use and never stopped nor destroyed: a thread blocked on
// a condition variable must not see it destroyed by static destructors.
class WatchdogThread {
public:
  static WatchdogThread &get() {
    static std::atomic<WatchdogThread *> Instance{nullptr};
    static std::once_flag AtFork; // a forked child has no copy of the thread: it starts its own
    std::call_once(AtFork, [] { ::pthread_atfork(nullptr, nullptr, [] { Instance.store(nullptr); }); });
    WatchdogThread *current = Instance.load();
    if (current)
      return *current;
    auto *fresh = new WatchdogThread();
    if (!Instance.compare_exchange_strong(current, fresh)) {
      delete fresh; // another thread made it first
      return *current;
    }
    std::thread([fresh] { fresh->run(); }).detach();
    return *fresh;
  }

  void add(Watch *watch) {
    {
      std::lock_guard<std::mutex> lock(Mutex);
      Watched.insert(watch);
    }
    Wake.notify_one(); // its deadline may be the earliest
  }

  void remove(Watch *watch) {
    std::lock_guard<std::mutex> lock(Mutex);
    Watched.erase(watch);
  }

private:
  void run() {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, nullptr); // signals are for the threads that act on them
    std::unique_lock<std::mutex> lock(Mutex);
    while (true) {
      auto now = std::chrono::steady_clock::now();
      bool interrupted = interruptRequested();
      // The interrupt flag is polled: a signal handler cannot notify.
      auto next = now + std::chrono::milliseconds(100);
      for (auto it = Watched.begin(); it != Watched.end();) {
        Watch *watch = *it;
        if (interrupted || now >= watch->Until) {
          (interrupted ? watch->Interrupted : watch->TimedOut) = true;
          watch->Child.killGroup(); // not reaped while watched: the group is still the child's
          it = Watched.erase(it);
        } else {
          next = std::min(next, watch->Until);
          ++it;
        }
      }
      Wake.wait_until(lock, next);
    }
  }

  std::mutex Mutex;
  std::condition_variable Wake;
  std::set<Watch *> Watched;
};

Watch::Watch(ChildProcess &child, std::chrono::steady_clock::time_point until) : Child(child), Until(until) {
  WatchdogThread::get().add(this);
}

void Watch::disarm() { WatchdogThread::get().remove(this); }

} // namespace mlgo
