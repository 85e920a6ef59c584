// memcap/harness/exec/signals.cpp — see signals.hpp.
#include "harness/exec/signals.hpp"

namespace memcap {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
    g_signal.store(sig);
    g_stop.store(true);
}

}  // namespace

const std::atomic<bool>& stop_requested() { return g_stop; }
int stop_signal() { return g_signal.load(); }

StopSignals::StopSignals() {
    g_stop = false;
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
}

}  // namespace memcap
