// memcap/tests/allocator_pool.cpp — the memcap binary's allocator options (harness/cli/allocator.hpp)
// keep one pool: what one thread frees stays in the process, and the next thread's block of the
// same size reuses those pages instead of faulting in new ones. This is what lets the memory gate
// bound the process by the cells in flight (not by a sum over threads), and what keeps the sweeps'
// minor faults low. Linked with jemalloc and the same options as the binary; exit status 1 with a
// line per failed check.
#include "harness/cli/allocator.hpp"

#include <jemalloc/jemalloc.h>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = memcap::cli::kJemallocOptions;
}

namespace {

void* volatile sink = nullptr;  // keeps the compiler from eliding a malloc/free pair

double resident_mib() {
    std::ifstream statm("/proc/self/statm");
    long size = 0, resident = 0;
    statm >> size >> resident;
    return static_cast<double>(resident) * 4096.0 / (1 << 20);
}

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

constexpr std::size_t kBlock = std::size_t{200} << 20;  // 200 MiB
constexpr double kBlockMiB = 200.0;

/// On a new thread: a block of kBlock bytes, every page written, then freed.
void touch_and_free() {
    std::thread t([] {
        auto* p = static_cast<volatile char*>(std::malloc(kBlock));
        if (!p) std::abort();
        for (std::size_t i = 0; i < kBlock; i += 4096) p[i] = 1;  // volatile: each page written
        sink = const_cast<char*>(p);
        std::free(sink);
    });
    t.join();
}

int failures = 0;
void check(bool ok, const char* what, double value) {
    std::printf("%s %s: %.1f\n", ok ? "ok  " : "FAIL", what, value);
    failures += !ok;
}

}  // namespace

int main() {
    unsigned narenas = 0;
    std::size_t size = sizeof narenas;
    const bool read = mallctl("opt.narenas", &narenas, &size, nullptr, 0) == 0;
    check(read && narenas == 1, "jemalloc took the binary's options (opt.narenas is 1)", narenas);
    const double base = resident_mib();
    touch_and_free();
    const double after_first = resident_mib() - base;
    const long faults_before = minor_faults();
    touch_and_free();
    const long faults_second = minor_faults() - faults_before;
    const double after_second = resident_mib() - base;
    // The first thread's 200 MiB stay resident once freed (decay off: no page is handed back).
    check(after_first > 0.9 * kBlockMiB, "MiB still resident after one thread freed its 200 MiB (> 180)", after_first);
    // The second thread reuses them: one block's worth resident, not two (two arenas would hold 400).
    check(after_second < 1.5 * kBlockMiB, "MiB resident after a second thread did the same (< 300)", after_second);
    // ... without faulting its pages in again (a fresh block faults 51,200 pages of 4 KiB).
    check(faults_second < 5120, "minor faults of the second thread's block (< 5120 of its 51200 pages)", faults_second);
    return failures == 0 ? 0 : 1;
}
