// memcap/tasks/task.cpp — see task.hpp.
#include "tasks/task.hpp"

#include <atomic>

namespace memcap {

std::uint64_t new_fixed_parts_tag() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace memcap
