// memcap/harness/cli/main.cpp — the `memcap` binary (see commands.cpp for the commands).
#include "harness/cli/commands.hpp"

#if __has_include(<malloc.h>)
#include <malloc.h>  // glibc's mallopt (__GLIBC__ is defined only once a libc header is in)
#endif

int main(int argc, char** argv) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    // Cells allocate and free the same episode-sized buffers (128 KiB at n = 512,
    // d = 64) thousands of times. With glibc's defaults those come from mmap or from
    // per-thread heaps that are trimmed back to the kernel after each free, so every
    // cell page-faults its buffers in again (the associative-recall block of
    // compare-baseline.sh: 64 000-78 000 minor faults, a quarter of its CPU time in
    // the kernel, threads contending on the page tables). Blocks below 32 MiB
    // now come from the heap, and up to 64 MiB of free heap top is kept: 1 900 faults,
    // the same peak resident memory (docs/performance.md). Larger blocks are still mapped
    // and unmapped, so a large cell's memory is still returned when it ends. Results
    // do not depend on where a buffer lives.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
    return memcap::cli::memcap_main(argc, argv);
}
