// memcap/tests/allocator_pool.cpp — the memcap binary's allocator options (harness/cli/allocator.hpp)
// keep one pool for large blocks: what one thread frees stays in the process, and the next
// thread's block of the same size reuses those pages instead of faulting in new ones. This is
// what lets the memory gate bound the process by the cells in flight (not by a sum over threads),
// and what keeps the sweeps' minor faults low. Blocks under the oversize threshold come from an
// arena of each thread's own (so a thread gets back the cache-hot blocks it freed). Linked with
// jemalloc and the same options as the binary; exit status 1 with a line per failed check.
#include "harness/cli/allocator.hpp"
#include "harness/results/manifest.hpp"

#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

extern "C" {
extern const char* malloc_conf;
int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp, std::size_t newlen);
const char* malloc_conf = memcap::cli::kJemallocOptions;
}

namespace {

void* volatile sink = nullptr;  // keeps the compiler from eliding a malloc/free pair

const long page = sysconf(_SC_PAGESIZE);

double resident_mib() {
    std::ifstream statm("/proc/self/statm");
    long size = 0, resident = 0;
    statm >> size >> resident;
    return static_cast<double>(resident) * static_cast<double>(page) / (1 << 20);
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
        for (std::size_t i = 0; i < kBlock; i += static_cast<std::size_t>(page)) p[i] = 1;  // volatile: each page written
        sink = const_cast<char*>(p);
        std::free(sink);
    });
    t.join();
}

/// The arena the calling thread allocates its small blocks from (jemalloc's thread.arena).
unsigned thread_arena() {
    unsigned arena = 0;
    std::size_t size = sizeof arena;
    void* volatile block = std::malloc(64);  // binds the thread to its arena
    std::free(block);
    if (mallctl("thread.arena", &arena, &size, nullptr, 0) != 0) std::abort();
    return arena;
}

int failures = 0;
void check(bool ok, const char* what, double value) {
    std::printf("%s %s: %.1f\n", ok ? "ok  " : "FAIL", what, value);
    failures += !ok;
}

}  // namespace

int main() {
    // jemalloc took the binary's options: the manifest's account of the allocator names them
    // (the description starts with narenas, which jemalloc sets from the CPUs: "(narenas:8,...")
    const std::string held = memcap::allocator_description(), want = std::string(memcap::cli::kJemallocOptions) + ")";
    const bool same = held.size() > want.size() && held.compare(held.size() - want.size(), want.size(), want) == 0 &&
                      (held[held.size() - want.size() - 1] == ',' || held[held.size() - want.size() - 1] == '(');
    std::printf("%s jemalloc holds the binary's options: %s\n", same ? "ok  " : "FAIL", held.c_str());
    failures += !same;
    const double base = resident_mib();
    touch_and_free();
    const double after_first = resident_mib() - base;
    const long faults_before = minor_faults();
    touch_and_free();
    const long faults_second = minor_faults() - faults_before;
    const double after_second = resident_mib() - base;
    const double pages = static_cast<double>(kBlock) / static_cast<double>(page);
    // The first thread's 200 MiB stay resident once freed (decay off: no page is handed back).
    check(after_first > 0.9 * kBlockMiB, "MiB still resident after one thread freed its 200 MiB (> 180)", after_first);
    // The second thread reuses them: one block's worth resident, not two.
    check(after_second < 1.5 * kBlockMiB, "MiB resident after a second thread did the same (< 300)", after_second);
    // ... without faulting its pages in again (a fresh block faults every one of its pages).
    check(static_cast<double>(faults_second) < 0.1 * pages, "minor faults of the second thread's block (< a tenth of its pages)",
          static_cast<double>(faults_second));
    // Small blocks: this thread and a new one allocate from arenas of their own.
    const unsigned mine = thread_arena();
    unsigned other = mine;
    std::thread([&] { other = thread_arena(); }).join();
    check(other != mine, "a second thread's arena differs from the first's (arena index of the second)", other);
    return failures == 0 ? 0 : 1;
}
