// memcap/bench/thread_timing.hpp — the calling thread's CPU time, and the median of
// repeated timings of a body by it: the benchmarks' ceiling measurements (bench_memories.cpp)
// and the block's bound (block_bound.cpp) time their kernels the same way.
#pragma once

#include <algorithm>
#include <ctime>
#include <vector>

namespace memcap::bench {

/// Seconds of CPU time the calling thread has used.
inline double thread_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// The median over `reps` runs of `body`'s thread CPU time.
template <class F>
double median_seconds(int reps, F&& body) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const double t0 = thread_seconds();
        body();
        t.push_back(thread_seconds() - t0);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace memcap::bench
