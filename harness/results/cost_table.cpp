// memcap/harness/results/cost_table.cpp — see cost_table.hpp.
#include "harness/results/cost_table.hpp"

#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/results/csv.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <fstream>
#include <limits>
#include <set>
#include <tuple>

namespace memcap {
namespace {

const std::vector<Column>& cost_columns() {
    static const std::vector<Column> columns = {
        {"memory", "the backend"},
        {"memory_spec", "the summary row's memory, with the chosen settings"},
        {"task_spec", "the summary row's task"},
        {"budget_floats", "the budget; empty = natural size"},
        {"d", "code width"},
        {"n", "the task's size"},
        {"tuned", "what was chosen on tuning seeds; empty: nothing"},
        {"state_floats", "state floats of the memory when full (its sizing function)"},
        {"writes", "pairs written per episode"},
        {"write_flops",
         "FLOPs per written pair: the cost model's batched write "
         "of every pair, divided by their number"},
        {"read_flops",
         "FLOPs per query: the cost model's batched read of the "
         "task's queries, divided by their number"},
    };
    return columns;
}

std::int64_t positive_field(const std::string& text, const std::string& column, const std::string& where) {
    const std::int64_t v = parse_int(text, where + ": " + column);
    if (v < 1) throw UsageError(where + ": " + column + " '" + text + "' is not a positive integer");
    return v;
}

}  // namespace

std::string cost_table(const std::vector<std::string>& summary_paths) {
    std::string out = header_line(cost_columns());
    std::set<std::tuple<std::string, std::string, std::string, std::string, std::string>> seen;
    for (const std::string& summary_path : summary_paths) {
        const std::string where = "input '" + summary_path + "'";
        std::ifstream in(summary_path);
        if (!in) throw UsageError(where + ": cannot open for reading");
        std::string line;
        if (!std::getline(in, line)) throw UsageError(where + ": empty, not a memcap summary CSV");
        if (line.find(",seed,") != std::string::npos && line.find(",seeds,") == std::string::npos)
            throw UsageError(where +
                             ": per-seed rows (`run` or `sweep` output); give its "
                             "summary, `memcap aggregate " +
                             summary_path + " --out SUMMARY.csv`");
        const CsvColumns col(line, summary_columns(), where);
        std::size_t lineno = 1;
        while (std::getline(in, line)) {
            ++lineno;
            if (line.empty()) continue;
            const std::string at = where + " line " + std::to_string(lineno);
            const std::vector<std::string> f = split_csv_line(line);
            if (f.size() != col.count())
                throw UsageError(at + ": " + std::to_string(f.size()) + " fields, the header has " +
                                 std::to_string(col.count()));
            const std::string &memory = f[col["memory_spec"]], &task = f[col["task_spec"]],
                              &budget_text = f[col["budget_floats"]], &d_text = f[col["d"]], &n_text = f[col["n"]];
            if (!seen.emplace(memory, task, budget_text, d_text, n_text).second) continue;
            try {
                const Spec mspec = parse_memory_spec(memory), tspec = parse_task_spec(task);
                const MemoryEntry& entry = find_memory(mspec.name());
                const std::int64_t d_wide = positive_field(d_text, "d", at);
                if (d_wide > std::numeric_limits<int>::max())
                    throw UsageError(at + ": d '" + d_text + "' does not fit an int");
                const int d = static_cast<int>(d_wide);
                const std::int64_t n = positive_field(n_text, "n", at);
                const std::optional<std::int64_t> budget =
                    budget_text.empty() ? std::nullopt
                                        : std::optional<std::int64_t>(positive_field(budget_text, "budget_floats", at));
                const auto t = make_task(tspec);
                const TaskCell cell{n, d, 0};
                const MemoryShape shape(t->inputs(cell), budget);
                const MemorySize size = memory_size(entry, mspec, shape);  // the checks make_memory makes
                const std::int64_t writes = t->writes_per_episode(cell), queries = t->queries_per_episode(cell);
                CsvRecord r(cost_columns());
                r.set("memory", mspec.name())
                    .set("memory_spec", memory)
                    .set("task_spec", task)
                    .set("budget_floats", budget_text)
                    .set("d", d_text)
                    .set("n", n_text)
                    .set("tuned", f[col["tuned"]])
                    .set("state_floats", std::to_string(size.state_floats_after(writes)))
                    .set("writes", std::to_string(writes));
                if (entry.cost) {
                    const double w =
                        entry.cost(mspec, shape, Kernel::write_batch, 0, writes).flops / static_cast<double>(writes);
                    const double q = entry.cost(mspec, shape, Kernel::read_batch, writes, queries).flops /
                                     static_cast<double>(queries);
                    r.set("write_flops", format_sig(w)).set("read_flops", format_sig(q));
                }
                out += r.line();
            } catch (const UsageError& e) {
                const std::string what = e.what();
                throw UsageError(what.rfind(where, 0) == 0 ? what : at + ": " + what);
            }
        }
    }
    return out;
}

}  // namespace memcap
