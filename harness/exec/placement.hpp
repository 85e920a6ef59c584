// memcap/harness/exec/placement.hpp — starting a run's threads on cores of their own.
//
// The kernel puts a thread it creates on the core of the thread that created it, even with
// another core idle, and moves one of the two only when the creator blocks or at a later
// scheduler tick (4 ms at 250 Hz). Measured on 2 cores (AMD EPYC, 2026-12-05): a new
// std::thread started 0.03–4 ms after its creation while its creator computed, on the
// creator's core in 7 runs of 10; the block's parallel region started its second thread
// 1–4 ms late in most runs (timestamps at the region's start, 8 runs of each setting) —
// a core idle for 1–5% of the block. So, at the region's start, each other thread pins
// itself to a core of its own, and the calling thread yields its core until they have.
// With a busy loop holding one of the 2 cores, the block took 129 ms against 151 ms
// unpinned (9 interleaved runs): a pinned thread slowed by another process takes fewer of
// the run's work items, as the schedule is dynamic.
#pragma once

#include <atomic>

namespace memcap {

/// Whether parallel regions place their threads (TeamPlacement); off unless the program says
/// so. The memcap binary turns it on; a host that links memcap as a library (the Python
/// module, a test) keeps its threads' affinities as it set them.
void allow_thread_placement(bool allow);

/// The placement of one parallel region's threads. Made by the calling thread before the
/// region (it notes that thread's CPU); each thread of the region calls enter() first.
class TeamPlacement {
public:
    TeamPlacement();
    /// `thread` = omp_get_thread_num(), `team` = omp_get_num_threads(). Each thread but 0,
    /// the first time it runs a region (a thread of OpenMP's pool serves every region after),
    /// pins itself to one CPU of the process's allowed set, a different one per thread and
    /// none of them thread 0's, when the team has one thread per allowed CPU (the default
    /// --threads; with fewer threads than CPUs, processes run side by side would pin their
    /// threads onto the same few CPUs) and the user has not chosen a placement for OpenMP
    /// (OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY set: theirs holds). Thread 0 stays free
    /// to move; while the others have not entered (a new thread waiting on thread 0's core)
    /// it yields its core, a few times at most. Where the system refuses, nothing changes. Results never depend on it: only where threads run.
    /// Nothing at all unless allow_thread_placement(true) was called.
    void enter(int thread, int team);

private:
    int caller_cpu_;
    bool pins_;
    std::atomic<int> entered_{0};
};

}  // namespace memcap
