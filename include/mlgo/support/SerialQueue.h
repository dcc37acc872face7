// A background thread that runs submitted tasks one at a time, in order:
// work that blocks on the disk (syncs, renames, journal appends) leaves the
// threads that keep the CPUs busy. The queue is bounded, so producers that
// outrun the disk wait instead of piling up finished work.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace mlgo {

class SerialQueue {
public:
  /// At most `capacity` tasks wait (>= 1); submit() blocks while it is full.
  explicit SerialQueue(size_t capacity);
  SerialQueue(const SerialQueue &) = delete;
  SerialQueue &operator=(const SerialQueue &) = delete;
  /// Runs what is queued, then stops the thread.
  ~SerialQueue();

  /// Queues `task`; it runs after every task submitted before it.
  void submit(std::function<void()> task);
  /// Returns once every task submitted so far has run.
  void drain();

private:
  void loop();

  const size_t Capacity;
  std::mutex Mutex;
  std::condition_variable Changed;
  std::deque<std::function<void()>> Tasks;
  bool Running = false; // a task is being run (outside the lock)
  bool Stopping = false;
  std::thread Thread;
};

} // namespace mlgo
