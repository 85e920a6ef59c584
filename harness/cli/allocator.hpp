// memcap/harness/cli/allocator.hpp — the options the `memcap` binary gives jemalloc, its
// allocator (CMake option MEMCAP_JEMALLOC, on by default except under the sanitizers).
//
// Why jemalloc, and why these options (docs/performance.md, "the allocator"):
// - Cells allocate and free episode-sized buffers (16 KiB to over 64 MiB) once per cell,
//   and the blocks of 1–32 KiB that each memory allocates per episode (its state, reads,
//   features) many thousands of times a second. jemalloc serves blocks up to 32 KiB from
//   a cache of the thread's own, without a lock; glibc only up to 1 KiB. With glibc the
//   two threads of a run met at its arena's lock, and a thread woken from that lock ran
//   on its waker's core (Linux's wake-affine placement) while the other core idled.
// - narenas:1 and oversize_threshold:0: one pool for every thread and every size, so a
//   block one thread frees is there for the next cell on any thread, and what the process
//   holds is the most its cells in flight held at once (what the memory gate bounds) plus
//   fragmentation, not a sum over threads.
// - dirty_decay_ms:-1 and muzzy_decay_ms:-1: freed pages stay in the process. Otherwise
//   jemalloc hands them back to the kernel within seconds, and the next cell faults them
//   in zeroed (millions of minor faults in the capacity sweep).
// MALLOC_CONF in the environment is read after these and overrides them.
#pragma once

namespace memcap::cli {

inline constexpr const char* kJemallocOptions = "narenas:1,oversize_threshold:0,dirty_decay_ms:-1,muzzy_decay_ms:-1";

}  // namespace memcap::cli
