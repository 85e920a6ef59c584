// memcap/harness/exec/grid.cpp — see grid.hpp.
#include "harness/exec/grid.hpp"

#include "core/error.hpp"

#include <set>

namespace memcap {

std::int64_t checked_grid_size(const std::vector<std::int64_t>& sizes, const std::string& what) {
    std::int64_t total = 1;
    for (const auto n : sizes) {
        if (n == 0) return 0;
        if (total > kMaxCells / n)
            throw UsageError(what + " has more than " + std::to_string(kMaxCells) +
                             " cells; split it or use fewer values (seeds, n, budgets, ...)");
        total *= n;
    }
    return total;
}

std::int64_t GridBlock::size(const std::string& what) const {
    const auto count = [](const auto& v) { return static_cast<std::int64_t>(v.size()); };
    return checked_grid_size({count(readouts), count(ds), count(tasks), count(memories), count(budgets), count(ns), seeds},
                             what);
}

std::vector<CellSpec> GridBlock::cells() const {
    std::vector<CellSpec> out;
    out.reserve(static_cast<std::size_t>(
        size(name.empty() ? "the grid (memories x tasks x budgets x n x seeds)" : "[block " + name + "]")));
    for (const auto& readout : readouts)
        for (const int d : ds)
            for (const auto& task : tasks)
                for (const auto& memory : memories)
                    for (const auto& budget : budgets)
                        for (const auto n : ns)
                            for (std::int64_t seed = 0; seed < seeds; ++seed)
                                out.push_back(make_cell(memory, task, readout, budget, d, n, static_cast<std::uint64_t>(seed)));
    return out;
}

void check_cells(const std::vector<CellSpec>& cells) {
    std::set<std::string> checked;
    for (const auto& c : cells) {
        CellSpec first = c;
        first.seed = 0;
        if (checked.insert(cell_label(first)).second) check_cell(c);
    }
}

}  // namespace memcap
