// memcap/tasks/task.cpp — see task.hpp.
#include "tasks/task.hpp"

#include <cmath>

#include "core/error.hpp"

#include <atomic>
#include <limits>
#include <stdexcept>

namespace memcap {

std::uint64_t new_fixed_parts_tag() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

RowMat Task::initial_key_table(const TaskCell&) const {
    throw std::logic_error("task '" + spec_.canonical() + "' has no learned key table");
}

void Task::set_key_table(const TaskCell&, const RowMat&) {
    throw std::logic_error("task '" + spec_.canonical() + "' has no learned key table");
}

void Task::check(const TaskCell& c) const {
    if (c.n < 1) refuse("n", std::to_string(c.n), "must be at least 1");
    if (c.n > std::numeric_limits<int>::max())
        refuse("n", std::to_string(c.n), "exceeds " + std::to_string(std::numeric_limits<int>::max()) +
                                             " (targets and slots are ints)");
    if (c.d < 1) refuse("d", std::to_string(c.d), "must be at least 1");
    check_cell(c);
}

void Task::next_queries(const Episode&, ConstMatRef, RowMat&) const {
    throw std::logic_error("task '" + spec_.canonical() + "' reads once; next_queries is for chained tasks");
}

std::int64_t Task::bytes_of(double floats, double ints) {
    const double bytes = 4.0 * floats + 4.0 * ints;
    return bytes >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(bytes);
}

double Task::query_sigma(double noise, double cosine, int d) {
    if (cosine < 1.0) return std::sqrt((1.0 / (cosine * cosine) - 1.0) / static_cast<double>(d));
    return noise;
}

void Task::refuse_two_noises(double noise, double cosine) const {
    if (noise > 0.0 && cosine < 1.0)
        refuse("noise", format_real(noise), "and cosine=" + format_real(cosine) +
               " both set the query noise; give one (noise: sigma per entry; cosine: the same query-key cosine at every d)");
}

void Task::refuse(const std::string& key, const std::string& value, const std::string& why) const {
    throw UsageError("task '" + spec_.canonical() + "': " + key + "=" + value + " " + why);
}

void Task::require_distinct_codes(const TaskCell& c, const std::string& what, std::int64_t count, int reserved) const {
    if (count >= 2 && c.d - reserved < 2)
        refuse("d", std::to_string(c.d),
               "cannot hold " + what + " that differ: " +
                   (reserved ? "with " + std::to_string(reserved) + " coordinate(s) reserved, they " : "they ") +
                   "live in " + std::to_string(c.d - reserved) + " dimension(s), where every unit vector is +1 or -1 " +
                   "(needs d >= " + std::to_string(reserved + 2) + ")");
}

}  // namespace memcap
