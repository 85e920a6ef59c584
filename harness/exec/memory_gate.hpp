// memcap/harness/exec/memory_gate.hpp — bounds the memory of the cells in flight.
//
// Threads compute cells at once; a few large cells together can need more
// memory than the machine has, although each fits. Before a thread starts a
// cell it takes the cell's estimated peak (check_cell_structure: its memory's
// and its task's bytes) from a budget of kInFlightShare of the machine's
// physical memory, and waits while the cells already in flight hold too much
// of it; a cell larger than the whole budget runs alone (cells above 80% of the
// machine are refused before any work). Waiting changes when a cell runs, never
// what it computes.
#pragma once

#include "core/spin_lock.hpp"

#include <condition_variable>

namespace memcap {

/// The share of physical memory the cells in flight may hold together (their estimated peaks).
constexpr double kInFlightShare = 0.5;

class MemoryGate {
public:
    /// A budget of `limit_bytes`; ≤ 0: kInFlightShare of this machine's physical memory.
    explicit MemoryGate(double limit_bytes = 0);

    /// Holds `bytes` of the budget for as long as it lives.
    class Hold {
    public:
        Hold(MemoryGate& gate, double bytes);
        ~Hold();
        Hold(const Hold&) = delete;
        Hold& operator=(const Hold&) = delete;

    private:
        MemoryGate& gate_;
        double bytes_;
    };

    double limit() const { return limit_; }
    /// The most the cells in flight held at once (estimated bytes).
    double high_water() const;

private:
    void acquire(double bytes);
    void release(double bytes);
    double limit_, in_flight_ = 0, high_ = 0;
    int cells_ = 0, waiting_ = 0;
    mutable SpinLock lock_;                // never sleeps on a taken lock (core/spin_lock.hpp)
    std::condition_variable_any freed_;    // notified only when a thread waits
};

}  // namespace memcap
