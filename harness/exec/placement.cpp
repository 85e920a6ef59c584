// memcap/harness/exec/placement.cpp — see placement.hpp.
#include "harness/exec/placement.hpp"

#include <atomic>
#include <cstdlib>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace memcap {
namespace {

std::atomic<bool> placement_allowed{false};

bool user_chose_placement() {
    static const bool chose = std::getenv("OMP_PROC_BIND") || std::getenv("OMP_PLACES") || std::getenv("GOMP_CPU_AFFINITY");
    return chose;
}

/// Pins the calling thread to the `index`-th allowed CPU other than `skip`; false unless
/// there are exactly `team` allowed CPUs, or if the system refuses.
bool pin_to_other_cpu(int index, int skip, int team) {
#if defined(__linux__)
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) != team) return false;
    std::vector<int> others;  // the allowed CPUs but `skip`, in order
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &allowed) && cpu != skip) others.push_back(cpu);
    if (index < 0 || static_cast<std::size_t>(index) >= others.size()) return false;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(others[static_cast<std::size_t>(index)], &one);
    return ::sched_setaffinity(0, sizeof one, &one) == 0;
#else
    (void)index, (void)skip, (void)team;
    return false;
#endif
}

}  // namespace

void allow_thread_placement(bool allow) { placement_allowed = allow; }

TeamPlacement::TeamPlacement() {
#if defined(__linux__)
    caller_cpu_ = ::sched_getcpu();
#else
    caller_cpu_ = -1;
#endif
    pins_ = placement_allowed.load() && caller_cpu_ >= 0 && !user_chose_placement();
}

void TeamPlacement::enter(int thread, int team) {
    if (!pins_ || team < 2) return;
    if (thread > 0) {
        thread_local bool placed = false;
        if (!placed) placed = true, pin_to_other_cpu(thread - 1, caller_cpu_, team);
        entered_.fetch_add(1);
        return;
    }
#if defined(__linux__)
    for (int tries = 0; tries < 4 && entered_.load() < team - 1; ++tries) ::sched_yield();
#endif
}

}  // namespace memcap
