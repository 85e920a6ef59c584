// memcap/tasks/registry.hpp — the table of tasks.
//
// One entry per task (registry.cpp): name, one-line description, parameters
// with defaults, the meaning of n, and a factory. `memcap list` prints it.
#pragma once

#include "core/spec.hpp"
#include "tasks/task.hpp"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace memcap {

struct TaskEntry {
    std::string name;
    std::string description;
    std::vector<ParamInfo> params;
    std::string n_meaning;  // what the cell's n is for this task
    std::string source;
    std::function<std::unique_ptr<Task>(const Spec&)> make;
    /// What a capacity counts along (the reports' capacity axis): "n" (stored pairs, or the
    /// task's n), "lag" (a lag k, the row's slot) or "L" (a stream length, the task's n).
    std::string capacity_axis = "n";
    /// What a row's slot is ("lag", "position", "lag bucket"); empty: the task has one slot.
    std::string slot_meaning{};
    /// Slots that name parts of the task read on their own too ({"0", "untouched"}); empty: none.
    std::vector<std::pair<std::string, std::string>> slot_parts{};
    /// True when n counts stored pairs and each read is scored against every stored value: no state
    /// of B bits recalls every one of more than the largest n with log2(n!) <= B (the information
    /// limit), and `memcap theory`'s capacity lines model it (written once).
    bool pairs_limit = false;

    Schema schema() const { return {"task", name, params}; }
};

const std::vector<TaskEntry>& task_registry();
std::vector<std::string> task_names();
/// The entry called `name`; UsageError listing the known names otherwise.
const TaskEntry& find_task(const std::string& name);
/// Parses and binds a task spec string (UsageError on any problem).
Spec parse_task_spec(const std::string& text);
std::unique_ptr<Task> make_task(const Spec& spec);

}  // namespace memcap
