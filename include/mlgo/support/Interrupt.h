// SIGINT/SIGTERM request a clean stop: work in flight finishes, state is
// flushed, and the tool exits 130. A second signal stops at once.
#pragma once

namespace mlgo {

void installInterruptHandlers();
bool interruptRequested();

/// The exit status of a run stopped by a signal.
constexpr int InterruptedExitCode = 130;

} // namespace mlgo
