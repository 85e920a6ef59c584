// memcap/harness/exec/memory_gate.cpp — see memory_gate.hpp.
#include "harness/exec/memory_gate.hpp"

#include <algorithm>
#include <mutex>

#include <unistd.h>

namespace memcap {

MemoryGate::MemoryGate(double limit_bytes) : limit_(limit_bytes) {
    if (limit_ <= 0)
        limit_ = kInFlightShare * static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
}

void MemoryGate::acquire(double bytes) {
    std::unique_lock<SpinLock> lock(lock_);
    if (cells_ != 0 && in_flight_ + bytes > limit_) {
        ++waiting_;  // counted under the lock, so a release that sees it notifies after this thread waits
        freed_.wait(lock, [&] { return cells_ == 0 || in_flight_ + bytes <= limit_; });
        --waiting_;
    }
    in_flight_ += bytes, ++cells_;
    high_ = std::max(high_, in_flight_);
}

void MemoryGate::release(double bytes) {
    bool notify = false;
    {
        std::lock_guard<SpinLock> lock(lock_);
        in_flight_ -= bytes, --cells_;
        if (cells_ == 0) in_flight_ = 0;  // no rounding left behind
        notify = waiting_ > 0;
    }
    if (notify) freed_.notify_all();  // condition_variable_any locks a mutex of its own: only when needed
}

double MemoryGate::high_water() const {
    std::lock_guard<SpinLock> lock(lock_);
    return high_;
}

MemoryGate::Hold::Hold(MemoryGate& gate, double bytes) : gate_(gate), bytes_(std::max(bytes, 0.0)) { gate_.acquire(bytes_); }
MemoryGate::Hold::~Hold() { gate_.release(bytes_); }

}  // namespace memcap
