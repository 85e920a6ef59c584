// memcap/harness/cli/main.cpp — the `memcap` binary (see commands.cpp for the commands).
#include "harness/cli/commands.hpp"

#if defined(MEMCAP_JEMALLOC)
#include "harness/cli/allocator.hpp"

// jemalloc reads its options from this symbol when it starts (harness/cli/allocator.hpp).
extern "C" {
extern const char* malloc_conf;
__attribute__((visibility("default"))) const char* malloc_conf = memcap::cli::kJemallocOptions;
}
#elif __has_include(<malloc.h>)
#include <malloc.h>  // glibc's mallopt (__GLIBC__ is defined only once a libc header is in)
#endif

int main(int argc, char** argv) {
#if !defined(MEMCAP_JEMALLOC) && defined(__GLIBC__) && defined(M_ARENA_MAX) && defined(M_MMAP_MAX) && defined(M_TRIM_THRESHOLD)
    // Built without jemalloc (MEMCAP_JEMALLOC=OFF or no libjemalloc-dev, and the sanitizers): glibc's
    // allocator, told to keep what it frees in one pool.
    //
    // Cells allocate and free episode-sized buffers (keys, values, queries, reads: from
    // 16 KiB to over 64 MiB) once per cell, and consecutive cells differ in n and d, so
    // Eigen frees and allocates them again. glibc's defaults hand blocks above its mmap
    // threshold, and every block of a thread's own arena (capped at 64 MiB, unmapped when
    // empty), back to the kernel, and the next cell page-faults them in zeroed: in the
    // capacity sweep 13 M minor faults and a quarter of its CPU time in the kernel, 93% of
    // the faults in the episode fill (perf record -e page-faults). One arena for every
    // thread (their small blocks still come from per-thread caches, without a lock), no
    // mmap'd blocks, and no trimming below 1 GiB of free heap top keep freed memory in the
    // process for the next cell (docs/performance.md). What the process then holds is the
    // most its cells in flight held at once (what the memory gate bounds) plus
    // fragmentation; the peak resident set is reported with each measurement. Results do
    // not depend on where a buffer lives.
    //
    // Not one arena per core: the threads' frees would stop meeting at the arena's lock
    // (on 2 cores the associative-recall block ran about 10% faster in wall time, as a
    // thread woken from that lock no longer lands on its waker's core), but each thread's
    // arena keeps the most that thread ever held, so the process would hold the sum over
    // its threads rather than what the memory gate bounds, and a block above an arena's
    // 64 MiB heap is mmap'd whatever M_MMAP_MAX says (docs/performance.md).
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    return memcap::cli::memcap_main(argc, argv);
}
