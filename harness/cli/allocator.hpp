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
// - narenas:1 and oversize_threshold:0: one pool for every thread and every size, so a
//   block one thread frees is there for the next cell on any thread. What the process
//   holds is the most its cells in flight held at once (what the memory gate bounds) plus
//   fragmentation plus each thread's cache (at most 20 blocks of each size class up to
//   32 KiB and 200 of each small one: about 2–3 MiB a thread), not a sum over threads.
//   (jemalloc empties an arena when the last thread bound to it exits; the main thread
//   stays bound to the one arena for the whole run, so that never happens mid-run.)
// - dirty_decay_ms:-1 and muzzy_decay_ms:-1: freed pages stay in the process. Otherwise
//   jemalloc hands them back to the kernel within seconds, and the next cell faults them
//   in zeroed (millions of minor faults in the capacity sweep). It also means jemalloc
//   never unmaps or madvises during a run, so OpenMPI's memory hooks (which watch munmap
//   and madvise) never fire from inside the allocator.
// MALLOC_CONF in the environment is read after these and overrides them (turning decay back
// on under MPI with an RDMA transport is untested). tests/allocator_pool.cpp checks them.
#pragma once

namespace memcap::cli {

inline constexpr const char* kJemallocOptions = "narenas:1,oversize_threshold:0,dirty_decay_ms:-1,muzzy_decay_ms:-1";

}  // namespace memcap::cli
