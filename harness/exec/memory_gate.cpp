// memcap/harness/exec/memory_gate.cpp — see memory_gate.hpp.
#include "harness/exec/memory_gate.hpp"

#include <algorithm>

#include <unistd.h>

namespace memcap {

MemoryGate::MemoryGate(double limit_bytes) : limit_(limit_bytes) {
    if (limit_ <= 0)
        limit_ = kInFlightShare * static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
}

void MemoryGate::acquire(double bytes) {
    std::unique_lock<std::mutex> lock(mutex_);
    freed_.wait(lock, [&] { return cells_ == 0 || in_flight_ + bytes <= limit_; });
    in_flight_ += bytes, ++cells_;
    high_ = std::max(high_, in_flight_);
}

void MemoryGate::release(double bytes) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        in_flight_ -= bytes, --cells_;
        if (cells_ == 0) in_flight_ = 0;  // no rounding left behind
    }
    freed_.notify_all();
}

double MemoryGate::high_water() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return high_;
}

MemoryGate::Hold::Hold(MemoryGate& gate, double bytes) : gate_(gate), bytes_(std::max(bytes, 0.0)) { gate_.acquire(bytes_); }
MemoryGate::Hold::~Hold() { gate_.release(bytes_); }

}  // namespace memcap
