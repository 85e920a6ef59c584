// memcap/core/spin_lock.hpp — a lock for the short critical sections between a run's threads.
//
// The threads of a run meet briefly and often: the memory gate before and after each
// group of cells, handing a cell's rows to the writer, the progress bar. A mutex
// puts a thread that finds it taken to sleep, and the thread that unlocks it wakes it;
// Linux then tends to run the woken thread on the waker's core (wake-affine placement),
// so on a small machine both threads share one core for a scheduler tick or more while
// the other core idles (seen with `perf record -e sched:sched_migrate_task` on 2 cores:
// 15 ms of a 110 ms run). This lock never sleeps: it spins with the CPU's pause hint, and
// after kSpins rounds yields the core (the holder may have been descheduled when threads
// outnumber cores). A holder that writes (rows to a pipe, the sweep's journal with its
// periodic fdatasync) keeps the others yielding meanwhile: their cores have nothing
// else of the run's to do. It has the Lockable interface, so std::lock_guard and
// std::condition_variable_any work with it.
#pragma once

#include <atomic>
#include <thread>

namespace memcap {

class SpinLock {
public:
    void lock() noexcept {
        for (int spins = 0;;) {
            if (!locked_.exchange(true, std::memory_order_acquire)) return;
            while (locked_.load(std::memory_order_relaxed)) {  // wait by reading, not by writing
                if (spins < kSpins) {
                    ++spins;  // stops at kSpins: a lock held for minutes never overflows it
#if defined(__x86_64__) || defined(__i386__)
                    __builtin_ia32_pause();
#endif
                } else {
                    std::this_thread::yield();
                }
            }
        }
    }
    bool try_lock() noexcept {
        return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
    }
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

private:
    // pauses before the first yield: 4096 of them, from about ten microseconds to 0.2 ms
    // by the CPU's pause latency (about 10 to 140 cycles)
    static constexpr int kSpins = 4096;
    std::atomic<bool> locked_{false};
};

}  // namespace memcap
