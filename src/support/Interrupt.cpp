#include "mlgo/support/Interrupt.h"

#include <atomic>
#include <csignal>
#include <unistd.h>

namespace mlgo {
namespace {
std::atomic<bool> Requested{false};

void onSignal(int) {
  if (Requested.exchange(true))
    ::_exit(InterruptedExitCode);
  static const char Message[] = "\nINFO:root:interrupt received: finishing work in flight (signal again to stop now)\n";
  [[maybe_unused]] ssize_t n = ::write(2, Message, sizeof(Message) - 1);
}
} // namespace

void installInterruptHandlers() {
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interruptRequested() { return Requested.load(std::memory_order_relaxed); }

} // namespace mlgo
