#include "mlgo/support/SerialQueue.h"

#include <algorithm>

namespace mlgo {

SerialQueue::SerialQueue(size_t capacity) : Capacity(std::max<size_t>(1, capacity)), Thread([this] { loop(); }) {}

SerialQueue::~SerialQueue() {
  {
    std::lock_guard<std::mutex> lock(Mutex);
    Stopping = true;
  }
  Changed.notify_all();
  Thread.join();
}

void SerialQueue::submit(std::function<void()> task) {
  std::unique_lock<std::mutex> lock(Mutex);
  Changed.wait(lock, [&] { return Tasks.size() < Capacity; });
  Tasks.push_back(std::move(task));
  Changed.notify_all();
}

void SerialQueue::drain() {
  std::unique_lock<std::mutex> lock(Mutex);
  Changed.wait(lock, [&] { return Tasks.empty() && !Running; });
}

void SerialQueue::loop() {
  std::unique_lock<std::mutex> lock(Mutex);
  for (;;) {
    Changed.wait(lock, [&] { return !Tasks.empty() || Stopping; });
    if (Tasks.empty())
      return; // stopping, and nothing left
    std::function<void()> task = std::move(Tasks.front());
    Tasks.pop_front();
    Running = true;
    Changed.notify_all(); // room for a waiting submit()
    lock.unlock();
    task();
    lock.lock();
    Running = false;
    Changed.notify_all(); // drain() may be waiting
  }
}

} // namespace mlgo
