// memcap/harness/cli/allocator.hpp — the options the `memcap` binary gives jemalloc, its
// allocator (CMake MEMCAP_JEMALLOC: AUTO, the default, links it when libjemalloc-dev is
// installed; never under the sanitizers).
//
// Why jemalloc, and why these options (docs/performance.md, the bullet "The allocator"):
// - Cells allocate and free episode-sized buffers (16 KiB to over 64 MiB) once per cell,
//   and the blocks of 1–32 KiB that each memory allocates per episode (its state, reads,
//   features) many thousands of times a second. jemalloc serves blocks up to 32 KiB from
//   a cache of the thread's own, without a lock; glibc only up to 1 KiB. With glibc the
//   two threads of a run met at its arena's lock, and a thread woken from that lock ran
//   on its waker's core (Linux's wake-affine placement) while the other core idled.
// - An arena per thread for blocks under 1 MiB (jemalloc's default narenas, 4 per CPU: a new
//   thread takes an arena no other thread uses while there are fewer threads than that), one
//   arena shared by every thread for blocks of 1 MiB and more (oversize_threshold:1048576).
//   A block under 1 MiB that a thread frees is what that thread's next cell gets back, its
//   lines still in the core's own L2 cache (1–2 MiB on the CPUs here). With one arena for
//   everything, the next cell on the *other* thread often got it instead, and every line of
//   it then moved between the cores' caches before it could be written: the block's two
//   threads spent 8–17% more CPU than one thread did on the same work, on days the machine's
//   two cores were far apart (docs/performance.md, "The allocator"). Larger blocks fit in
//   no L2 anyway; they stay in one pool, so what the process holds for them is the most its
//   cells in flight held at once (what the memory gate bounds), not a sum over threads. A
//   thread's own arena keeps at most what its largest cell held in blocks under 1 MiB.
// - dirty_decay_ms:-1 and muzzy_decay_ms:-1: freed pages stay in the process. Otherwise
//   jemalloc hands them back to the kernel within seconds, and the next cell faults them
//   in zeroed (millions of minor faults in the capacity sweep). It also means jemalloc
//   never unmaps or madvises during a run, so OpenMPI's memory hooks (which watch munmap
//   and madvise) never fire from inside the allocator.
// MALLOC_CONF in the environment is read after these and overrides them (turning decay back
// on under MPI with an RDMA transport is untested). tests/allocator_pool.cpp checks them.
#pragma once

namespace memcap::cli {

inline constexpr const char* kJemallocOptions = "oversize_threshold:1048576,dirty_decay_ms:-1,muzzy_decay_ms:-1";

}  // namespace memcap::cli
