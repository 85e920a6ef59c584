// memcap/harness/exec/signals.hpp — Ctrl-C and SIGTERM during a sweep.
//
// While a StopSignals object lives, the first SIGINT or SIGTERM only sets the
// stop flag (no new cell starts; cells in flight finish and are journaled); a
// second one kills at once (SA_RESETHAND). The flag and the signal number are
// process-wide, read by the runner and by MPI workers.
#pragma once

#include <atomic>
#include <csignal>

namespace memcap {

/// Set once a stop signal arrived (or by request_stop()).
const std::atomic<bool>& stop_requested();
/// The signal that asked to stop, 0 if none.
int stop_signal();

class StopSignals {
public:
    StopSignals();  // clears the flag, then installs the handlers
    ~StopSignals();  // restores the previous handlers
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

private:
    struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace memcap
