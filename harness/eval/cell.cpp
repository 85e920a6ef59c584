// memcap/harness/eval/cell.cpp — see cell.hpp.
#include "harness/eval/cell.hpp"

#include "core/error.hpp"
#include "harness/eval/probe.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <cmath>
#include <cstdio>

namespace memcap {

const char* const kCsvHeader =
    "memory_spec,task_spec,readout,budget_floats,state_floats,param_floats,d,n,seed,slot,"
    "queries,correct,accuracy_frac,chance_frac,target_dist_mean,status,message\n";

CellOutcome run_cell(const CellSpec& c) {
    try {
        const auto task = make_task(c.task);
        const TaskCell tc{c.n, c.d, c.seed};
        const MemoryShape shape(task->inputs(tc), c.budget_floats);
        auto memory = make_memory(c.memory, shape, c.seed);
        const Spec readout = resolve_readout(c.readout, c.memory.name());
        check_combination(*task, c.task, c.memory, readout);
        if (readout.name() == "native") return native_readout(*memory, *task, tc);
        return probe_readout(*memory, *task, tc,
                             ProbeOptions{readout.integer("train"), readout.real("ridge")});
    } catch (const std::exception& ex) {  // a failure of this cell, reported in its row
        CellOutcome out;
        out.ok = false;
        out.message = ex.what();
        return out;
    }
}

void check_combination(const Task& task, const Spec& task_spec, const Spec& memory_spec, const Spec& readout) {
    if (!task.hides_pairs()) return;
    if (!find_memory(memory_spec.name()).can_hide_pairs) {
        std::string able;
        for (const auto& e : memory_registry())
            if (e.can_hide_pairs) able += (able.empty() ? "" : ", ") + e.name;
        throw UsageError("task '" + task_spec.canonical() + "' hides the asked-for pair from each read, which needs a memory " +
                         "that keeps its pairs apart (" + able + "); memory '" + memory_spec.name() + "' does not");
    }
    if (readout.name() != "native")
        throw UsageError("task '" + task_spec.canonical() + "' needs the native readout (the probe reads the whole state " +
                         "and cannot hide a pair); got readout '" + readout.canonical() + "'");
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string out = "\"";
    for (char ch : text) {
        if (ch == '"') out += '"';
        out += (ch == '\n' || ch == '\r') ? ' ' : ch;
    }
    return out + "\"";
}

std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (quoted) {
            if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += '"', ++i;
            else if (ch == '"') quoted = false;
            else fields.back() += ch;
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            fields.emplace_back();
        } else {
            fields.back() += ch;
        }
    }
    return fields;
}

namespace {

std::string format_sig(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

}  // namespace

std::string csv_rows(const CellSpec& c, const CellOutcome& o) {
    const std::string lead = csv_field(c.memory.canonical()) + "," + csv_field(c.task.canonical()) + "," +
                             csv_field(resolve_readout(c.readout, c.memory.name()).canonical()) +
                             "," + (c.budget_floats ? std::to_string(*c.budget_floats) : std::string()) + ",";
    const std::string where = "," + std::to_string(c.d) + "," + std::to_string(c.n) + "," + std::to_string(c.seed) + ",";
    if (!o.ok) return lead + ",," + where.substr(1) + ",,,,,,error," + csv_field(o.message) + "\n";

    const auto task = make_task(c.task);
    const double chance = task->chance(TaskCell{c.n, c.d, c.seed});
    std::string out;
    for (const auto& s : o.slots) {
        out += lead + std::to_string(o.state_floats) + "," + std::to_string(o.param_floats) + where +
               (s.slot < 0 ? std::string() : std::to_string(s.slot)) + "," + std::to_string(s.queries) + "," +
               std::to_string(s.correct) + "," +
               format_real(static_cast<double>(s.correct) / static_cast<double>(s.queries)) + "," +
               format_real(chance) + "," + (std::isnan(s.target_dist_sum) ? std::string() : format_sig(s.target_dist_sum / static_cast<double>(s.queries))) + ",ok,\n";
    }
    return out;
}

}  // namespace memcap
