// Task::check refuses, before any work, the cells a task cannot run: a UsageError
// whose one line names the task, the key and the value. A cell that passes never
// makes fill_episode throw; one that fails is refused by fill_episode too.
#include "core/error.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace memcap;

namespace {

void require_refused(const std::string& task_text, const TaskCell& cell, const std::string& key_value) {
    CAPTURE(task_text, cell.n, cell.d);
    const Spec spec = parse_task_spec(task_text);
    const auto task = make_task(spec);
    REQUIRE_THROWS_AS(task->check(cell), UsageError);
    try {
        task->check(cell);
    } catch (const UsageError& e) {
        const std::string message = e.what();
        INFO(message);
        REQUIRE(message.find("task '" + spec.canonical() + "'") != std::string::npos);
        REQUIRE(message.find(key_value) != std::string::npos);
        REQUIRE(message.find('\n') == std::string::npos);
    }
    Episode e;
    REQUIRE_THROWS_AS(task->fill_episode(cell, Split::Test, 0, e), UsageError);  // never filled unchecked
}

void require_runs(const std::string& task_text, const TaskCell& cell) {
    CAPTURE(task_text, cell.n, cell.d);
    const auto task = make_task(parse_task_spec(task_text));
    REQUIRE_NOTHROW(task->check(cell));
    Episode e;
    for (Split split : {Split::Test, Split::Train}) {
        REQUIRE_NOTHROW(task->fill_episode(cell, split, 0, e));
        REQUIRE(e.keys.rows() == cell.n);
        REQUIRE(e.queries.rows() == static_cast<Eigen::Index>(e.target.size()));
        REQUIRE(e.slot.size() == e.target.size());
        // every candidate differs from every other: the scoring can tell them apart
        for (Eigen::Index i = 0; i < e.candidates.rows(); ++i)
            for (Eigen::Index j = 0; j < i; ++j) REQUIRE(e.candidates.row(i) != e.candidates.row(j));
    }
}

}  // namespace

TEST_CASE("selective copying: content longer than the stream is refused up front", "[tasks][check]") {
    require_refused("selective_copying:content=16", TaskCell{8, 64, 0}, "content=16");
    require_runs("selective_copying:content=16,episodes=2", TaskCell{16, 64, 0});  // content = n: no blank at all
}

TEST_CASE("tiny d: refused exactly where the candidate codes can coincide", "[tasks][check]") {
    // d = 1: every unit code is +1 or -1, so among >= 2 candidates two coincide (surely
    // for >= 3), and a read of the later one scores as wrong. From d = 2 random unit
    // codes differ with probability 1.
    require_refused("assoc_recall", TaskCell{4, 1, 0}, "d=1");
    require_refused("assoc_recall", TaskCell{2, 1, 0}, "d=1");
    require_runs("assoc_recall", TaskCell{1, 1, 0});  // one candidate: nothing to confuse
    require_runs("assoc_recall", TaskCell{64, 2, 0});
    require_refused("lag_recall", TaskCell{12, 1, 0}, "vocab=16");
    require_refused("copying", TaskCell{12, 1, 0}, "d=1");
    require_runs("copying:vocab=1,episodes=2", TaskCell{12, 1, 0});
    require_runs("lag_recall:episodes=2", TaskCell{12, 2, 0});
    // selective copying reserves coordinate 0 for the blank: content codes live in d - 1
    require_refused("selective_copying:content=4", TaskCell{12, 1, 0}, "d=1");
    require_refused("selective_copying:content=4", TaskCell{12, 2, 0}, "needs d >= 3");
    require_runs("selective_copying:content=4,vocab=1,episodes=2", TaskCell{12, 2, 0});
    require_runs("selective_copying:content=4,episodes=2", TaskCell{12, 3, 0});
}

TEST_CASE("every task refuses n < 1, d < 1 and n beyond an int", "[tasks][check]") {
    for (const auto& name : task_names()) {
        require_refused(name, TaskCell{0, 64, 0}, "n=0");
        require_refused(name, TaskCell{4, 0, 0}, "d=0");
        require_refused(name, TaskCell{std::int64_t{1} << 31, 64, 0}, "n=2147483648");
    }
}

TEST_CASE("peak bytes of a task's side grow with n and d, and cover one episode", "[tasks][sizing]") {
    for (const auto& name : task_names()) {
        CAPTURE(name);
        const auto task = make_task(parse_task_spec(name));
        const TaskCell small{64, 32, 0}, large{100000000, 64, 0};
        const Episode e = task->episode(small, Split::Test, 0);
        REQUIRE(e.queries.rows() == task->queries_per_episode(small));
        const double episode = 4.0 * double(e.keys.size() + e.values.size() + e.queries.size() + e.candidates.size());
        REQUIRE(double(task->peak_bytes(small)) >= episode);
        // n = 10^8 at d = 64: at least the keys and values, 51.2 GB (for a task whose writes grow
        // with n; mqar's stream has its own length)
        if (task->writes_per_episode(large) >= large.n) REQUIRE(task->peak_bytes(large) >= std::int64_t{51200} * 1000 * 1000);
    }
}
