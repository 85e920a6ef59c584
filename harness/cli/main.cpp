// memcap/harness/cli/main.cpp — the `memcap` binary (see commands.cpp for the commands).
#include "harness/cli/commands.hpp"

#if __has_include(<malloc.h>)
#include <malloc.h>  // glibc's mallopt (__GLIBC__ is defined only once a libc header is in)
#include <unistd.h>
#endif

int main(int argc, char** argv) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX) && defined(M_MMAP_MAX) && defined(M_TRIM_THRESHOLD) && defined(M_TOP_PAD)
    // Cells allocate and free episode-sized buffers (keys, values, queries, reads: from
    // 16 KiB to over 64 MiB) once per cell, and consecutive cells differ in n and d, so
    // Eigen frees and allocates them again. glibc's defaults hand blocks above its mmap
    // threshold, and every block of a thread's own arena (capped at 64 MiB, unmapped when
    // empty), back to the kernel, and the next cell page-faults them in zeroed: in the
    // capacity sweep 13 M minor faults and a quarter of its CPU time in the kernel, 93% of
    // the faults in the episode fill (perf record -e page-faults). No mmap'd blocks and no
    // trimming below 1 GiB of free heap top keep freed memory in the process for the next
    // cell (docs/performance.md).
    //
    // Arenas: one per core. With a single arena shared by every thread, a thread that
    // frees a block while another holds the arena's lock sleeps on it, and the thread that
    // unlocks wakes it onto its own core (Linux's wake-affine placement): on 2 cores both
    // threads then share one for milliseconds while the other idles, and the
    // associative-recall block took 12% longer in wall time (docs/performance.md). An
    // arena per core takes that lock away. A thread's arena lives in heaps of at most
    // 64 MiB; glibc unmaps a further heap once it is empty unless the heap before it has
    // less than M_TOP_PAD free, so a pad of 64 MiB keeps them (the capacity sweep: 28
    // munmaps instead of 245, 0.52 M minor faults instead of 0.49–1.15 M; 0.14 M with one
    // arena). The pad also makes the main heap grow in steps of 64 MiB of address space,
    // which costs nothing until a page is touched.
    //
    // What the process then holds is the most its cells in flight held at once (what the
    // memory gate bounds) plus fragmentation; the peak resident set is reported with each
    // measurement. Results do not depend on where a buffer lives.
    const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
    mallopt(M_ARENA_MAX, cores > 0 ? static_cast<int>(cores) : 1);
    mallopt(M_TOP_PAD, 64 << 20);
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    return memcap::cli::memcap_main(argc, argv);
}
