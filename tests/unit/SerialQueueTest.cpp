// SerialQueue: tasks run one at a time in submission order on one thread
// that is not the submitter's; a full queue holds the submitter back; drain()
// and the destructor return only after every task has run.
#include "mlgo/support/SerialQueue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

using namespace mlgo;

TEST(SerialQueue, RunsTasksInOrderOneAtATimeOffTheSubmittingThread) {
  std::vector<int> order;
  std::atomic<int> running{0}, overlapped{0};
  std::thread::id submitter = std::this_thread::get_id();
  std::atomic<bool> ranHere{false};
  {
    SerialQueue queue(4);
    for (int i = 0; i < 200; ++i)
      queue.submit([&, i] {
        if (running.fetch_add(1) != 0)
          ++overlapped;
        ranHere = ranHere || std::this_thread::get_id() == submitter;
        order.push_back(i); // unsynchronised: one task at a time
        running.fetch_sub(1);
      });
    queue.drain();
    ASSERT_EQ(order.size(), 200u);
  }
  for (int i = 0; i < 200; ++i)
    EXPECT_EQ(order[i], i);
  EXPECT_EQ(overlapped.load(), 0);
  EXPECT_FALSE(ranHere.load());
}

TEST(SerialQueue, AFullQueueHoldsTheSubmitterBack) {
  SerialQueue queue(2);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> done{0};
  queue.submit([&] {
    released.wait();
    ++done;
  });                            // running, blocked
  queue.submit([&] { ++done; }); // waiting: 1 of 2
  queue.submit([&] { ++done; }); // waiting: 2 of 2
  std::atomic<bool> fourthQueued{false};
  std::thread producer([&] {
    queue.submit([&] { ++done; });
    fourthQueued = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(fourthQueued.load()) << "a full queue took another task";
  release.set_value();
  producer.join();
  queue.drain();
  EXPECT_EQ(done.load(), 4);
}

TEST(SerialQueue, TheDestructorRunsWhatIsQueued) {
  std::atomic<int> done{0};
  {
    SerialQueue queue(8);
    for (int i = 0; i < 8; ++i)
      queue.submit([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ++done;
      });
  }
  EXPECT_EQ(done.load(), 8);
}
